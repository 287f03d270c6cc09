package perflab.storage.memory;

import perflab.storage.Entry;
import perflab.storage.RangeIterator;
import perflab.storage.Storage;
import perflab.storage.StorageStats;
import perflab.util.Bytes;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;

/** A plain concurrent sorted map: the lab's ceiling for what storage costs. Nothing survives a restart. */
public final class MemoryStorage implements Storage {
    private final ConcurrentSkipListMap<byte[], byte[]> map = new ConcurrentSkipListMap<>(Bytes.ORDER);
    private final LongAdder bytes = new LongAdder();

    @Override
    public byte[] get(byte[] key) {
        return map.get(key);
    }

    @Override
    public void put(byte[] key, byte[] value) {
        byte[] old = map.put(key, value);
        bytes.add(key.length + value.length - (old == null ? 0 : key.length + old.length));
    }

    @Override
    public void delete(byte[] key) {
        byte[] old = map.remove(key);
        if (old != null) {
            bytes.add(-(key.length + old.length));
        }
    }

    @Override
    public RangeIterator range(byte[] from, byte[] to) {
        NavigableMap<byte[], byte[]> view = map;
        if (from != null && to != null) {
            view = Bytes.compare(from, to) >= 0 ? new ConcurrentSkipListMap<>(Bytes.ORDER) : map.subMap(from, true, to, false);
        } else if (from != null) {
            view = map.tailMap(from, true);
        } else if (to != null) {
            view = map.headMap(to, false);
        }
        Iterator<Map.Entry<byte[], byte[]>> it = view.entrySet().iterator();
        return RangeIterator.of(new Iterator<Entry>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public Entry next() {
                Map.Entry<byte[], byte[]> e = it.next();
                return new Entry(e.getKey(), e.getValue());
            }
        });
    }

    @Override
    public void flush() {
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = StorageStats.template("memory");
        s.put("memtable_bytes", bytes.sum());
        return s;
    }

    @Override
    public void close() {
    }
}
