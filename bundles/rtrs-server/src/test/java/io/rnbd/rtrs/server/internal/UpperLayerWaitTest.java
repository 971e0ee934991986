package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.SgDesc;
import io.rnbd.testkit.Await;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Requests that arrive while there is no upper layer wait for one, up to upper.wait.ms (fake time). */
class UpperLayerWaitTest {
    static final int QD = 4;
    final FakeScheduler fake = new FakeScheduler();
    final AtomicReference<RtrsServerOps> upper = new AtomicReference<>();
    SoftDevice dev;
    RtrsServer server;

    @BeforeEach
    void start() throws Exception {
        dev = new SoftDevice("soft-u", InetAddress.getByName("127.0.0.1"));
        server = new RtrsServer(new ServerConfig(0, 8192, QD, false, 60_000, 5).withUpperWait(2000), upper::get, () -> null, fake,
                fake.nanoSource());
        server.add(dev);
    }

    @AfterEach
    void stop() {
        server.close();
        dev.close();
    }

    private RawClient connected() throws Exception {
        return new RawClient(dev).connect(server.listenAddresses(dev).get(0), 2, "waiting");
    }

    private void write(RawClient c, int buf) throws Exception {
        SgDesc d = c.info.descs().get(buf);
        c.cons[1].writeImm(HostileClientTest.writeMsg(new byte[16], 1, 8), d.addr(), d.key(),
                Imm.ioReq(buf, 24, Imm.offsetBits(QD)));
        Await.until("the request parked", () -> server.waitingForUpperLayer() == 1);
    }

    @Test
    void aRequestWaitsForTheNextUpperLayer() throws Exception {
        try (RawClient c = connected()) {
            write(c, 0);
            fake.advance(Duration.ofMillis(1500));
            assertNull(c.cons[1].recvs.poll(200, TimeUnit.MILLISECONDS), "no answer while there is no upper layer");
            upper.set(r -> r.complete(0));
            server.upperLayerChanged();
            WorkCompletion rsp = c.cons[1].recv();
            assertEquals(0, Imm.rspErrno(rsp.imm()));
            fake.advance(Duration.ofMillis(1000)); // the expired timer must not answer a second time
            assertNull(c.cons[1].recvs.poll(200, TimeUnit.MILLISECONDS));
        }
    }

    @Test
    void withoutOneForUpperWaitMsItFailsWithEnodev() throws Exception {
        try (RawClient c = connected()) {
            write(c, 1);
            fake.advance(Duration.ofMillis(2000));
            WorkCompletion rsp = c.cons[1].recv();
            assertEquals(1, Imm.rspMsgId(rsp.imm()));
            assertEquals(Errno.ENODEV, Imm.rspErrno(rsp.imm()));
        }
    }
}
