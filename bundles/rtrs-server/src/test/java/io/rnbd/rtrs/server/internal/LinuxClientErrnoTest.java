package io.rnbd.rtrs.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.SgDesc;
import io.rnbd.testkit.Await;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 f: the errnos this server sends, as Linux's client (rtrs-clt.c, 6.1 to 7.2 alike)
 * decodes them. An IO's errno travels in the IO_RSP's IMM, which rtrs_from_io_rsp_imm reads as
 * {@code -(int)((payload >> 19) & 0x1ff)}; a refused connect's in the reject's private data,
 * which rtrs_rdma_conn_rejected reads, if at least a CON_RSP long, as
 * {@code (int16_t)le16_to_cpu(msg->errno)} at offset 4. Linux's client treats every reject
 * alike: the first map fails with that errno (init_path → rtrs_clt_open), a reconnect tries
 * again after the delay until max_reconnect_attempts; EBUSY only changes the log line
 * ("Previous session is still exists on the server, please reconnect later").
 */
class LinuxClientErrnoTest {
    static final int QD = 4;
    static final int CHUNK = 16384;

    SoftDevice dev;
    ScheduledExecutorService timer;
    RtrsServer server;
    final AtomicReference<Authenticator> auth = new AtomicReference<>();
    final ConcurrentLinkedQueue<RtrsServerRequest> held = new ConcurrentLinkedQueue<>();
    volatile boolean holding;

    /** The upper layer answers each request with the errno in the first 4 bytes of its user header. */
    final RtrsServerOps ops = r -> {
        if (holding) {
            held.add(r);
            return;
        }
        r.complete(r.userHeader().order(ByteOrder.LITTLE_ENDIAN).getInt(0));
    };

    void start() throws Exception {
        dev = new SoftDevice("soft-le", InetAddress.getByName("127.0.0.1"));
        timer = Executors.newSingleThreadScheduledExecutor();
        server = new RtrsServer(new ServerConfig(0, CHUNK, QD, false, 60_000, 5), () -> ops, auth::get, timer,
                System::nanoTime);
        server.add(dev);
    }

    @AfterEach
    void stop() throws Exception {
        held.forEach(r -> r.complete(0));
        server.close();
        timer.shutdownNow();
        timer.awaitTermination(5, TimeUnit.SECONDS);
        dev.close();
    }

    InetSocketAddress addr() {
        return server.listenAddresses(dev).get(0);
    }

    /** rtrs_from_io_rsp_imm, as Linux's client decodes the IMM of an IO_RSP. */
    static int linuxErrno(int imm) {
        int payload = imm & 0x0fff_ffff;
        return -((payload >>> 19) & 0x1ff);
    }

    /** rtrs_rdma_conn_rejected: the reject's errno, or -ECONNRESET for private data shorter than a CON_RSP. */
    static int linuxRejectErrno(byte[] privateData) {
        if (privateData == null || privateData.length < ConRsp.SIZE) {
            return -Errno.ECONNRESET;
        }
        ByteBuffer b = ByteBuffer.wrap(privateData).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x1bbd, Short.toUnsignedInt(b.getShort(0)), "RTRS_MAGIC");
        assertEquals(2, Short.toUnsignedInt(b.getShort(2)) >> 8, "major version");
        return b.getShort(4);
    }

    int ioAnsweredWith(RawClient c, int buf, int errno) throws Exception {
        SgDesc d = c.info.descs().get(buf);
        byte[] msg = HostileClientTest.writeMsg(new byte[512], errno & 0xffff_ffffL, 8);
        RawClient.Con con = c.cons[1];
        con.writeImm(msg, d.addr(), d.key(), Imm.ioReq(buf, 512 + 8, Imm.offsetBits(QD)));
        WorkCompletion wc = con.recv();
        assertTrue(wc.hasImm());
        assertEquals(Imm.IO_RSP, Imm.type(wc.imm()));
        assertEquals(buf, Imm.rspMsgId(wc.imm()));
        con.repost(wc);
        return linuxErrno(wc.imm());
    }

    /**
     * What the RNBD layer answers (rnbd-server: ENOSPC from a full file, EOPNOTSUPP for an op
     * the export cannot do, EROFS, ETIMEDOUT from a hung backend, ENXIO for a device id the
     * server forgot) reaches Linux's client as that errno; one beyond the 9 bits of the field
     * arrives as EIO, not cut to another errno as Linux's own server would send it.
     */
    @Test
    void anIoErrnoArrivesAsLinuxsClientReadsIt() throws Exception {
        start();
        try (RawClient c = new RawClient(dev).connect(addr(), 2, "errno")) {
            int[] sent = {0, Errno.ENOSPC, Errno.EOPNOTSUPP, Errno.EROFS, Errno.ETIMEDOUT, Errno.ENXIO, Errno.EIO,
                Errno.EINVAL, 511};
            int buf = 0;
            for (int e : sent) {
                assertEquals(-e, ioAnsweredWith(c, buf, e), Errno.name(e));
                buf = (buf + 1) % QD;
            }
            assertEquals(-Errno.EIO, ioAnsweredWith(c, 0, 524), "ENOTSUPP (524) does not fit 9 bits");
            assertEquals(-Errno.EIO, ioAnsweredWith(c, 1, 512 + Errno.ENOMEM), "nor does anything past 511");
        }
    }

    /** A reconnect while the old instance of the path drains: EBUSY, which Linux's client logs and retries. */
    @Test
    void ebusyRejectIsLinuxsMinusSixteen() throws Exception {
        start();
        holding = true;
        try (RawClient first = new RawClient(dev).connect(addr(), 2, "busy")) {
            SgDesc d = first.info.descs().get(0);
            first.cons[1].writeImm(HostileClientTest.writeMsg(new byte[16], 0, 8), d.addr(), d.key(),
                    Imm.ioReq(0, 24, Imm.offsetBits(QD)));
            Await.until("request held", () -> !held.isEmpty());
            try (RawClient again = new RawClient(dev, first.sess, first.path)) {
                again.reconCnt = 2;
                assertEquals(-Errno.EBUSY, linuxRejectErrno(rejectOf(again, again.conReq(0, 2, true))));
            }
        }
    }

    /**
     * A client without the extension bit (every Linux client) while authentication is
     * required: EACCES. An unknown session without first_conn: ENXIO. Both as Linux reads them.
     */
    @Test
    void eaccesAndEnxioRejectsAreLinuxs() throws Exception {
        start();
        auth.set(new Authenticator() {
            @Override
            public String method() {
                return "chap";
            }

            @Override
            public AuthExchange initiate(String hostId) {
                throw new UnsupportedOperationException();
            }

            @Override
            public AuthExchange respond() {
                throw new UnsupportedOperationException();
            }
        });
        try (RawClient linux = new RawClient(dev)) {
            assertEquals(-Errno.EACCES, linuxRejectErrno(rejectOf(linux, linux.conReq(0, 2, true))));
        }
        auth.set(null);
        try (RawClient stranger = new RawClient(dev)) {
            assertEquals(-Errno.ENXIO, linuxRejectErrno(rejectOf(stranger, stranger.conReq(0, 2, false))));
        }
    }

    byte[] rejectOf(RawClient c, byte[] conReq) throws Exception {
        RawClient.Con con = c.new Con(addr(), conReq);
        CmEvent e = con.event();
        assertEquals(CmEvent.Type.REJECTED, e.type());
        con.qp.close();
        return e.privateData();
    }
}
