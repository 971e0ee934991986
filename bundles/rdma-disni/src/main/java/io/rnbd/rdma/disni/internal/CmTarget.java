package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmId;

/** Whoever owns a CM id and receives its events on the device's CM thread. */
interface CmTarget {
    /** @param data the event's status and private data as libdisni kept them; null if it kept none */
    void onCmEvent(int type, RdmaCmId id, CmNative.EventData data);
}
