package io.rnbd.rdma.soft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rdma.api.QpState;
import io.rnbd.rdma.soft.internal.SoftQp.Phase;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/** The queue pair's state table: the moves {@code SoftQp.changeState} allows, and what each phase shows and admits. */
class SoftQpPhaseTest {

    @Test
    void movesFollowTheHandshakeAndEndInClosed() {
        Map<Phase, Set<Phase>> allowed = Map.of(
                Phase.CONNECTING, EnumSet.of(Phase.AWAIT_REPLY, Phase.ERROR),
                Phase.AWAIT_REPLY, EnumSet.of(Phase.RTS, Phase.ERROR),
                Phase.AWAIT_HELLO, EnumSet.of(Phase.REQUESTED, Phase.ERROR),
                Phase.REQUESTED, EnumSet.of(Phase.RTS, Phase.ERROR),
                Phase.RTS, EnumSet.of(Phase.ERROR),
                Phase.ERROR, EnumSet.of(Phase.CLOSED),
                Phase.CLOSED, EnumSet.noneOf(Phase.class));
        for (Phase from : Phase.values()) {
            for (Phase to : Phase.values()) {
                assertEquals(allowed.get(from).contains(to), from.canMoveTo(to), from + " -> " + to);
            }
        }
    }

    @Test
    void everyPhaseBeforeRtsShowsInit() {
        for (Phase p : EnumSet.of(Phase.CONNECTING, Phase.AWAIT_REPLY, Phase.AWAIT_HELLO, Phase.REQUESTED)) {
            assertEquals(QpState.INIT, p.visible(), p.name());
        }
        assertEquals(QpState.RTS, Phase.RTS.visible());
        assertEquals(QpState.ERROR, Phase.ERROR.visible());
        assertEquals(QpState.CLOSED, Phase.CLOSED.visible());
    }

    @Test
    void eachPhaseAdmitsOnlyItsFrames() {
        byte[] all = {Wire.HELLO, Wire.ACCEPT, Wire.REJECT, Wire.SEND, Wire.SEND_IMM, Wire.WRITE, Wire.WRITE_IMM,
            Wire.READ_REQ, Wire.READ_RESP, Wire.ACK, Wire.DISCONNECT, Wire.SEND_INV};
        Map<Phase, Set<Byte>> admitted = Map.of(
                Phase.AWAIT_HELLO, Set.of(Wire.HELLO),
                Phase.AWAIT_REPLY, Set.of(Wire.ACCEPT, Wire.REJECT),
                Phase.RTS, Set.of(Wire.SEND, Wire.SEND_IMM, Wire.WRITE, Wire.WRITE_IMM, Wire.READ_REQ,
                        Wire.READ_RESP, Wire.ACK, Wire.DISCONNECT, Wire.SEND_INV));
        for (Phase p : Phase.values()) {
            for (byte type : all) {
                assertEquals(admitted.getOrDefault(p, Set.of()).contains(type), p.admits(type), p + " admits " + type);
            }
        }
    }
}
