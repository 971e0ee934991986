package io.rnbd.rdma.disni.internal;

/** enum rdma_cm_event_type, as libdisni returns it. */
final class CmEvents {
    static final int ADDR_RESOLVED = 0;
    static final int ADDR_ERROR = 1;
    static final int ROUTE_RESOLVED = 2;
    static final int ROUTE_ERROR = 3;
    static final int CONNECT_REQUEST = 4;
    static final int CONNECT_RESPONSE = 5;
    static final int CONNECT_ERROR = 6;
    static final int UNREACHABLE = 7;
    static final int REJECTED = 8;
    static final int ESTABLISHED = 9;
    static final int DISCONNECTED = 10;
    static final int DEVICE_REMOVAL = 11;
    static final int TIMEWAIT_EXIT = 15;

    private CmEvents() {
    }
}
