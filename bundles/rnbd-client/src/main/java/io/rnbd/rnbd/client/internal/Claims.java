package io.rnbd.rnbd.client.internal;

import io.rnbd.rnbd.api.DeviceClaim;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who holds a mapped device (the kernel's open count of an rnbd device), by holder name, so
 * an unmap can be refused while anyone does and say who. A device asks it under its own
 * lock; this never calls back, so the two locks always nest the same way.
 */
final class Claims {
    /** Holders of claims by name, with how many claims each holds (guarded by this). */
    private final Map<String, Integer> users = new TreeMap<>();
    private int count;

    DeviceClaim claim(String user) {
        String who = user == null || user.isBlank() ? "unnamed" : user;
        synchronized (this) {
            users.merge(who, 1, Integer::sum);
            count++;
        }
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) {
                synchronized (this) {
                    users.computeIfPresent(who, (k, n) -> n == 1 ? null : n - 1);
                    count--;
                }
            }
        };
    }

    /** Claims held now. */
    synchronized int count() {
        return count;
    }

    /** How many claims are held and by whom, for the one line that refuses an unmap. */
    synchronized String describe() {
        return count + (count == 1 ? " user" : " users") + (count == 0 ? "" : " (" + names() + ")");
    }

    /** The holders: a few names, then how many more. */
    private String names() {
        StringBuilder sb = new StringBuilder();
        int shown = 0;
        for (Map.Entry<String, Integer> e : users.entrySet()) {
            if (shown == 4) {
                sb.append(", and ").append(users.size() - shown).append(" more");
                break;
            }
            sb.append(shown++ == 0 ? "" : ", ").append(e.getKey());
            if (e.getValue() > 1) {
                sb.append(" x").append(e.getValue());
            }
        }
        return sb.toString();
    }
}
