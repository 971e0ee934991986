package io.rnbd.telemetry.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.RdmaDeviceInfo;
import io.rnbd.nbd.gateway.api.NbdGatewayAdmin;
import io.rnbd.rnbd.api.RnbdClientAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.RtrsServerSessionInfo;
import io.rnbd.telemetry.api.Table;
import io.rnbd.telemetry.api.TableSchema;
import io.rnbd.telemetry.testing.StubAdmins;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import io.rnbd.common.Provider;
import org.junit.jupiter.api.Test;

class TelemetryReaderTest {

    /**
     * The one-source rule, checked from the DTOs' side: every field of every snapshot DTO the
     * admin services return (filled by reflection, so a field added tomorrow is included) shows
     * up in some table, hence in JMX, /metrics and the dashboard.
     */
    @Test
    void everyFieldOfEveryAdminDtoReachesATable() {
        Fixtures f = new Fixtures();
        StubAdmins admins = new StubAdmins();
        admins.rdmaDevices.add(f.make(RdmaDeviceInfo.class));
        admins.clientSessions.add(f.make(RtrsClientSessionInfo.class));
        admins.serverSessions.add(f.make(RtrsServerSessionInfo.class));
        admins.exports.add(f.make(RnbdServerAdmin.ExportInfo.class));
        admins.devices.add(f.make(RnbdClientAdmin.DeviceInfo.class));
        admins.gateway = f.make(NbdGatewayAdmin.GatewayInfo.class);
        admins.mpPolicies.add(f.make(Provider.class));
        admins.authenticators.add(f.make(Provider.class));
        admins.backends.add(f.make(Provider.class));

        Set<Object> expected = new HashSet<>();
        for (Object dto : List.of(admins.rdmaDevices, admins.clientSessions, admins.serverSessions, admins.exports,
                admins.devices, admins.gateway, admins.mpPolicies, admins.authenticators, admins.backends)) {
            Fixtures.leaves(dto, expected);
        }
        Set<Object> seen = new HashSet<>();
        for (Table t : new TelemetryReader(admins.sources()).tables()) {
            for (List<Object> row : t.rows()) {
                row.forEach(v -> Fixtures.leaves(v, seen));
            }
        }
        Set<Object> missing = new HashSet<>(expected);
        missing.removeAll(seen);
        assertEquals(Set.of(), missing, "DTO values no table carries");
    }

    @Test
    void theApplianceProfileReadsAsTheConsoleShowsIt() {
        StubAdmins admins = new StubAdmins().applianceProfile();
        TelemetryReader reader = new TelemetryReader(admins.sources());
        Table paths = reader.table("rtrs_client_path").orElseThrow();
        assertEquals(2, paths.rows().size());
        Map<String, Object> p0 = paths.asMap(paths.rows().get(0));
        assertEquals("appliance", p0.get("session"));
        assertEquals("127.0.0.1@127.0.0.1", p0.get("path"));
        assertEquals("CONNECTED", p0.get("state"));
        assertEquals("soft0", p0.get("hca_name"));
        assertEquals(1042L, p0.get("reads"));
        assertEquals(1042L * 4096, p0.get("read_bytes"));
        assertEquals(80_000L, p0.get("io_latency_ns"));
        assertEquals(List.of("appliance", "127.0.0.1@127.0.0.1"), paths.id(paths.rows().get(0)));

        admins.pathState("appliance", "127.0.0.1@127.0.0.1", PathState.CLOSED);
        Map<String, Object> after = paths.asMap(reader.table("rtrs_client_path").orElseThrow().rows().get(0));
        assertEquals("CLOSED", after.get("state"), "read again, not cached");
        assertEquals("", after.get("hca_name"));

        Table openers = reader.table("rnbd_export_opener").orElseThrow();
        assertEquals(List.of(List.of("mem0", "appliance", "RW", 0L)), openers.rows());
        Table counters = reader.table("rdma_device").orElseThrow();
        assertEquals(Map.of("polls", 12L, "polls_skipped", 3L), counters.value(counters.rows().get(0), "counters"));
        assertEquals(1, reader.table("nbd_gateway").orElseThrow().rows().size());
        Table backends = reader.table("rnbd_backend").orElseThrow();
        assertEquals(Map.of("name", "memory", "bundle", "rnbd-backend-memory", "version", "0.1.0.SNAPSHOT",
                "bundle_id", 67L, "ranking", 0L, "exports", List.of("mem0")), backends.asMap(backends.rows().get(1)));
        Table auths = reader.table("rtrs_authenticator").orElseThrow();
        assertEquals(List.of("client", "server"), auths.value(auths.rows().get(0), "used_by"),
                "the server's method joins the client's");
        assertEquals(3, reader.table("rtrs_mp_policy").orElseThrow().rows().size());
        assertTrue(reader.table("no_such_table").isEmpty());
    }

    @Test
    void absentServicesGiveEmptyTablesAndTheSchemasStay() {
        TelemetryReader reader = new TelemetryReader(new Sources(() -> null, () -> null, () -> null, () -> null,
                () -> null, () -> null));
        assertEquals(reader.schemas(), reader.tables().stream().map(Table::schema).toList());
        for (Table t : reader.tables()) {
            assertEquals(List.of(), t.rows(), t.schema().name());
        }
    }

    @Test
    void aServiceFailingWhileReadGivesAnEmptyTableAndTheOthersStillRead() {
        StubAdmins admins = new StubAdmins().applianceProfile();
        Sources failing = new Sources(() -> () -> {
            throw new IllegalStateException("bundle stopping");
        }, () -> admins.rtrsClient, () -> null, () -> null, () -> null, () -> null);
        TelemetryReader reader = new TelemetryReader(failing);
        assertEquals(List.of(), reader.table("rdma_device").orElseThrow().rows());
        assertEquals(2, reader.table("rtrs_client_path").orElseThrow().rows().size());
    }

    @Test
    void tableNamesAreUniqueAndEveryTableShowsSomethingOfTheConsoleOrTheGateway() {
        List<TableSchema> schemas = new TelemetryReader(new StubAdmins().sources()).schemas();
        assertEquals(schemas.size(), schemas.stream().map(TableSchema::name).distinct().count());
        assertEquals(12, schemas.size());
    }
}
