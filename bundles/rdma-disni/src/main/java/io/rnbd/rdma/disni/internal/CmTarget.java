package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmId;

/** Whoever owns a CM id and receives its events on the device's CM thread. */
interface CmTarget {
    void onCmEvent(int type, RdmaCmId id);
}
