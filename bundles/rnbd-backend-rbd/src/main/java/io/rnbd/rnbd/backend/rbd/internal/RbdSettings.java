package io.rnbd.rnbd.backend.rbd.internal;

/**
 * What every rbd export of this appliance server inherits unless it sets its own
 * {@code backend.X}: how to reach the cluster and how long to wait for it. An appliance server
 * normally talks to one cluster as one cephx user, so these live in the backend's own
 * configuration ({@code io.rnbd.rnbd.backend.rbd}), not in every export.
 *
 * @param pool              pool of an export that names none
 * @param conf              ceph.conf path; "" = Ceph's own search ($CEPH_CONF, /etc/ceph/ceph.conf)
 * @param id                cephx user without "client." ("admin" if empty)
 * @param keyring           keyring path; "" = what ceph.conf says (default
 *                          /etc/ceph/ceph.client.ID.keyring)
 * @param opTimeoutSec      0 = IO waits for the cluster as long as it takes (Ceph's default);
 *                          N = an OSD request unanswered for N s fails with ETIMEDOUT
 * @param connectTimeoutSec how long opening an export waits for the monitors
 */
public record RbdSettings(String pool, String conf, String id, String keyring, int opTimeoutSec,
                          int connectTimeoutSec) {
    public static final RbdSettings DEFAULTS = new RbdSettings("rbd", "", "admin", "", 0, 10);
    static final int MAX_TIMEOUT_SEC = 24 * 3600;

    public RbdSettings {
        pool = pool == null ? "" : pool.trim();
        conf = conf == null ? "" : conf.trim();
        id = RbdParams.cephxId(id == null || id.isBlank() ? "admin" : id.trim());
        keyring = keyring == null ? "" : keyring.trim();
        if (opTimeoutSec < 0 || opTimeoutSec > MAX_TIMEOUT_SEC) {
            throw new IllegalArgumentException("op.timeout.sec=" + opTimeoutSec + " must be between 0 and "
                    + MAX_TIMEOUT_SEC);
        }
        if (connectTimeoutSec < 1 || connectTimeoutSec > MAX_TIMEOUT_SEC) {
            throw new IllegalArgumentException("connect.timeout.sec=" + connectTimeoutSec + " must be between 1 and "
                    + MAX_TIMEOUT_SEC);
        }
    }
}
