package io.rnbd.rnbd.client.internal;

import io.rnbd.rnbd.server.internal.FakeRtrs;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsServerOps;

/** The end-to-end scenario over the in-JVM fake RTRS. */
class FakeTransportEndToEndTest extends RnbdEndToEndScenario {
    @Override
    protected Transport transport(RtrsServerOps server) {
        FakeRtrs rtrs = new FakeRtrs(server);
        return new Transport() {
            @Override
            public RtrsClientSession connect(String name) {
                return rtrs.connect(name, "", 32, 124 * 1024, true);
            }

            @Override
            public void close() throws Exception {
                rtrs.close();
                if (rtrs.violations() != 0) {
                    throw new AssertionError("server completed requests twice");
                }
            }
        };
    }
}
