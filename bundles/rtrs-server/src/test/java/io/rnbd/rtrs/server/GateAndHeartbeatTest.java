package io.rnbd.rtrs.server;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.soft.internal.SoftDevice;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.proto.AuthMsg;
import io.rnbd.rtrs.proto.ConReq;
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
        RawClient.Con con = c.new Con(server.listenAddresses(dev).get(0));
        c.cons = new RawClient.Con[] {con};
        assertEquals(CmEvent.Type.ESTABLISHED, con.event().type());
        con.send(ConReq.SIZE, new ConReq(0, 1, 1, c.sess, c.path, true)::encode);
        WorkCompletion wc = con.recv();
        ConRsp rsp = ConRsp.decode(con.data(wc));
        con.repost(wc);
        assertEquals(0, rsp.errno());
        assertTrue(rsp.has(ConRsp.AUTH_F));
        return con;
    }

    @Test
    void noChunkAddressesBeforeAuthentication() throws Exception {
        start(REJECT_ALL);
        try (RawClient c = new RawClient(dev)) {
            RawClient.Con con = handshake(c);
            con.send(InfoReq.SIZE, new InfoReq("sneaky")::encode);
            assertEquals(CmEvent.Type.DISCONNECTED, con.event().type());
            assertTrue(con.recvs.stream().noneMatch(WorkCompletion::ok), "no INFO_RSP, only flushed receives");
        }
    }

    @Test
    void rejectedKeyIsAnsweredWithItsErrnoThenTheConnectionCloses() throws Exception {
        start(REJECT_ALL);
        try (RawClient c = new RawClient(dev)) {
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
            RawClient.Con con = c.new Con(server.listenAddresses(dev).get(0));
            c.cons = new RawClient.Con[] {con, null};
            assertEquals(CmEvent.Type.ESTABLISHED, con.event().type());
            con.send(ConReq.SIZE, new ConReq(0, 1, 1, c.sess, c.path, true)::encode);
            con.repost(con.recv());
            con.send(InfoReq.SIZE, new InfoReq("quiet")::encode);
            con.repost(con.recv());
            for (int i = 1; i <= 2; i++) {
                fake.advance(Duration.ofMillis(1000));
                WorkCompletion hb = con.recv();
                assertEquals(Imm.HB_MSG, Imm.type(hb.imm()), "heartbeat " + i);
                con.repost(hb);
            }
            fake.advance(Duration.ofMillis(1000)); // third tick: two missed, the path goes
            assertEquals(CmEvent.Type.DISCONNECTED, con.event().type());
        }
    }
}
