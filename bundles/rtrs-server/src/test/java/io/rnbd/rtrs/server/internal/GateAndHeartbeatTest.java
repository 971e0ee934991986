package io.rnbd.rtrs.server.internal;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.InfoReq;
import io.rnbd.testkit.FakeScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GateAndHeartbeatTest {
    SoftDevice dev;
    RtrsServer server;
    final FakeScheduler fake = new FakeScheduler();

    void start(Authenticator auth) throws Exception {
        dev = new SoftDevice("soft-g", InetAddress.getByName("127.0.0.1"));
        server = new RtrsServer(new ServerConfig(0, 8192, 4, true, 1000, 2), () -> r -> r.complete(0), () -> auth,
                fake, fake.nanoSource());
        server.add(dev);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        dev.close();
    }

    static final Authenticator REJECT_ALL = new Authenticator() {
        @Override
        public String method() {
            return "test";
        }

        @Override
        public AuthExchange initiate(String hostId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public AuthExchange respond() {
            return new AuthExchange() {
                @Override
                public byte[] step(byte[] peerMessage) throws AuthException {
                    throw new AuthException(Errno.EKEYREJECTED, "no");
                }

                @Override
                public boolean done() {
                    return false;
                }

                @Override
                public String peerId() {
                    return "";
                }
            };
        }
    };

    RawClient.Con handshake(RawClient c) throws Exception {
        RawClient.Con con = c.new Con(server.listenAddresses(dev).get(0), c.conReq(0, 1, true));
        c.cons = new RawClient.Con[] {con};
        CmEvent e = con.event();
        assertEquals(CmEvent.Type.ESTABLISHED, e.type());
        ConRsp rsp = RawClient.answer(e);
        assertEquals(0, rsp.errno());
        assertTrue(rsp.has(ConRsp.EXT_F));
        assertTrue(rsp.has(ConRsp.AUTH_F));
        return con;
    }

    /** A client without the extensions (Linux's) cannot authenticate: refused, and told so. */
    @Test
    void clientWithoutExtensionsIsRefusedWhereAuthenticationIsRequired() throws Exception {
        start(REJECT_ALL);
        try (RawClient c = new RawClient(dev)) {
            ConRsp r = c.hello(server.listenAddresses(dev).get(0), 1);
            assertEquals(Errno.EACCES, r.errno());
            assertTrue(server.sessions().isEmpty());
        }
    }

    /** Without an authenticator (or with "none") a Linux client is served, and offered nothing it cannot read. */
    @Test
    void clientWithoutExtensionsGetsLinuxsProtocol() throws Exception {
        start(null);
        try (RawClient c = new RawClient(dev).connect(server.listenAddresses(dev).get(0), 2, "linux")) {
            assertEquals(ConRsp.NEW_RKEY_F, c.conRsp.flags(), "only Linux's own flag");
        }
    }

    @Test
    void noChunkAddressesBeforeAuthentication() throws Exception {
        start(REJECT_ALL);
        try (RawClient c = new RawClient(dev).withExtensions()) {
            RawClient.Con con = handshake(c);
            con.send(InfoReq.SIZE, new InfoReq("sneaky")::encode);
            assertEquals(CmEvent.Type.DISCONNECTED, con.event().type());
            assertTrue(con.recvs.stream().noneMatch(WorkCompletion::ok), "no INFO_RSP, only flushed receives");
        }
    }

    @Test
    void rejectedKeyIsAnsweredWithItsErrnoThenTheConnectionCloses() throws Exception {
        start(REJECT_ALL);
        try (RawClient c = new RawClient(dev).withExtensions()) {
            RawClient.Con con = handshake(c);
            AuthMsg m = AuthMsg.step("test", new byte[] {1}, false);
            con.send(m.size(), m::encode);
            AuthMsg answer = AuthMsg.decode(con.data(con.recv()));
            assertEquals(Errno.EKEYREJECTED, answer.status());
            assertTrue(answer.has(AuthMsg.DNR_F));
            assertEquals(CmEvent.Type.DISCONNECTED, con.event().type());
        }
    }

    @Test
    void silentClientIsDroppedAfterMissedHeartbeats() throws Exception {
        start(null);
        try (RawClient c = new RawClient(dev)) {
            RawClient.Con con = c.new Con(server.listenAddresses(dev).get(0), c.conReq(0, 1, true));
            c.cons = new RawClient.Con[] {con};
            assertEquals(CmEvent.Type.ESTABLISHED, con.event().type());
            con.send(InfoReq.SIZE, new InfoReq("quiet")::encode);
            con.repost(con.recv());
            for (int i = 1; i <= 2; i++) {
                fake.advance(Duration.ofMillis(1000));
                WorkCompletion hb = con.recv();
                assertEquals(io.rnbd.rdma.api.WcOpcode.RECV_RDMA_WITH_IMM, hb.opcode(), "an empty RDMA_WRITE_WITH_IMM");
                assertEquals(Imm.HB_MSG, Imm.type(hb.imm()), "heartbeat " + i);
                con.repost(hb);
            }
            fake.advance(Duration.ofMillis(1000)); // third tick: two missed, the path goes
            assertEquals(CmEvent.Type.DISCONNECTED, con.event().type());
        }
    }
}
