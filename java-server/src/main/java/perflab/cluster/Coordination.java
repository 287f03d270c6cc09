package perflab.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One client request in flight: collects replica answers and answers the client exactly once, as soon as
 * the outcome is certain: after {@code ack} successes (not after the slowest replica), or with 504 as soon
 * as more than {@code from - ack} replicas have failed. Answers arriving afterwards are only counted.
 */
final class Coordination {
    private final Op op;
    private final int ack;
    private final int from;
    private final Consumer<Outcome> done;
    private int successes;
    private int failures;
    private Record newest;
    private final List<String> reasons = new ArrayList<>(2);
    private boolean answered;

    Coordination(Op op, int ack, int from, Consumer<Outcome> done) {
        this.op = op;
        this.ack = ack;
        this.from = from;
        this.done = done;
    }

    /** Called once per replica, from any thread; the client is answered outside the lock. */
    void onAnswer(String replica, ReplicaAnswer answer) {
        Outcome outcome;
        synchronized (this) {
            if (answered) {
                return;
            }
            if (answer.ok()) {
                successes++;
                newest = Record.newest(newest, answer.record);
                if (successes < ack) {
                    return;
                }
                outcome = success();
            } else {
                failures++;
                reasons.add(replica + ": " + answer.reason);
                if (failures <= from - ack) {
                    return;
                }
                outcome = new Outcome(Outcome.GATEWAY_TIMEOUT, null, "not enough replicas: " + ack + " of " + from
                        + " needed, " + failures + " failed (" + String.join("; ", reasons) + ")");
            }
            answered = true;
        }
        done.accept(outcome);
    }

    private Outcome success() {
        if (op != Op.GET) {
            return new Outcome(op.okStatus, null, null);
        }
        // the newest answer wins; a tombstone or nothing at all is a 404
        return newest != null && newest.isLive() ? new Outcome(200, newest, null) : new Outcome(404, null, null);
    }
}
