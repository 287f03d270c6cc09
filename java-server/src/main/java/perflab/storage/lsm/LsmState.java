package perflab.storage.lsm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Everything a read needs, published through one volatile reference so a read never sees a memtable
 * gone from the immutable list before its run is visible (and vice versa).
 */
final class LsmState {
    final Memtable active;
    /** Newest first. */
    final List<Memtable> immutables;
    final Version version;

    LsmState(Memtable active, List<Memtable> immutables, Version version) {
        this.active = active;
        this.immutables = Collections.unmodifiableList(new ArrayList<>(immutables));
        this.version = version;
    }

    LsmState withActive(Memtable next) {
        List<Memtable> imm = new ArrayList<>(immutables.size() + 1);
        imm.add(active);
        imm.addAll(immutables);
        return new LsmState(next, imm, version);
    }

    LsmState flushed(Memtable memtable, Version next) {
        List<Memtable> imm = new ArrayList<>(immutables);
        imm.remove(memtable);
        return new LsmState(active, imm, next);
    }

    LsmState withVersion(Version next) {
        return new LsmState(active, immutables, next);
    }

    /** The oldest memtable not yet in a run: compaction may only merge runs older than it. */
    long oldestUnflushed() {
        return immutables.isEmpty() ? active.id : immutables.get(immutables.size() - 1).id;
    }
}
