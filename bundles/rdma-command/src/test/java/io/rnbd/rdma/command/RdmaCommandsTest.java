package io.rnbd.rdma.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.Out;
import io.rnbd.command.support.SameAsTelemetry;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.RdmaAdmin;
import io.rnbd.rdma.api.RdmaDeviceInfo;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RdmaLinkAdmin;
import io.rnbd.telemetry.api.Telemetry;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

class RdmaCommandsTest {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    private String output() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static final List<RdmaDeviceInfo> DEVICES = List.of(
            new RdmaDeviceInfo("soft0", "soft", "0a0b:0c0d:0e0f:1011", LinkState.ACTIVE, List.of("127.0.0.1"),
                    List.of("rtrs-server", "rtrs-client"), java.util.Map.of("polls", 1234L)),
            new RdmaDeviceInfo("odd\"name", "soft", "n", LinkState.DOWN, List.of(), List.of()));

    private static Telemetry telemetry(RdmaAdmin admin) {
        return SameAsTelemetry.over(admin, null, null, null, null);
    }

    /** Links kept in a map, with the admin's documented errors. */
    private static final class FakeLinks implements RdmaLinkAdmin {
        final TreeMap<String, String> links = new TreeMap<>();

        @Override
        public String provider() {
            return "soft";
        }

        @Override
        public void addLink(String name, String address) throws RdmaException {
            if (!address.matches("[0-9.]+")) {
                throw new RdmaException(Errno.EINVAL, "not an IP address: '" + address + "'");
            }
            if (links.putIfAbsent(name, address) != null) {
                throw new RdmaException(Errno.EEXIST, "link " + name + " already exists");
            }
        }

        @Override
        public void deleteLink(String name) throws RdmaException {
            if (links.remove(name) == null) {
                throw new RdmaException(Errno.ENOENT, "no link named " + name);
            }
        }

        @Override
        public List<String> links() {
            return new ArrayList<>(links.keySet());
        }
    }

    @Test
    void statisticListsEachDevicesCountersOrADash() {
        StatisticCommand c = new StatisticCommand();
        c.setAdmin(() -> DEVICES);
        c.telemetry = telemetry(c.admin);
        c.setOut(out);
        c.execute();
        assertEquals(List.of(List.of("DEVICE", "COUNTER", "VALUE"), List.of("soft0", "polls", "1234"),
                List.of("odd\"name", "-", "-")), Out.cells(output()), output());
    }

    @Test
    void statisticOfOneDeviceAsJsonAndOfAnUnknownOne() {
        StatisticCommand c = new StatisticCommand();
        c.setAdmin(() -> DEVICES);
        c.telemetry = telemetry(c.admin);
        c.setOut(out);
        c.device = "soft0";
        c.json = true;
        c.execute();
        assertEquals("[{\"name\":\"soft0\",\"provider\":\"soft\",\"counters\":{\"polls\":1234}}]\n", output());
        bytes.reset();
        c.device = "mlx5_0";
        c.execute();
        assertEquals("Error: ENODEV: no RDMA device named mlx5_0\n", output());
    }

    @Test
    void devicesPrintsAnAlignedTable() {
        DevicesCommand c = new DevicesCommand();
        c.setAdmin(() -> DEVICES);
        c.telemetry = telemetry(c.admin);
        c.setOut(out);
        c.execute();
        String[] lines = output().split("\n");
        assertEquals(4, lines.length, output()); // header, rule, two rows
        assertEquals(lines[0].indexOf("STATE"), lines[2].indexOf("ACTIVE"), output());
        assertEquals(List.of(List.of("NAME", "PROVIDER", "STATE", "NODE", "ADDRESSES", "CLIENTS"),
                List.of("soft0", "soft", "ACTIVE", "0a0b:0c0d:0e0f:1011", "127.0.0.1", "rtrs-server,rtrs-client"),
                List.of("odd\"name", "soft", "DOWN", "n", "", "-")), Out.cells(output()), output());
        SameAsTelemetry.assertTable(output(), c.telemetry.table("rdma_device").orElseThrow());
    }

    @Test
    void devicesPrintsJson() {
        DevicesCommand c = new DevicesCommand();
        c.setAdmin(() -> DEVICES);
        c.telemetry = telemetry(c.admin);
        c.setOut(out);
        c.json = true;
        c.execute();
        assertEquals("[{\"name\":\"soft0\",\"provider\":\"soft\",\"node_id\":\"0a0b:0c0d:0e0f:1011\",\"state\":\"ACTIVE\","
                + "\"addresses\":[\"127.0.0.1\"],\"clients\":[\"rtrs-server\",\"rtrs-client\"],\"counters\":{\"polls\":1234}},"
                + "{\"name\":\"odd\\\"name\",\"provider\":\"soft\",\"node_id\":\"n\",\"state\":\"DOWN\","
                + "\"addresses\":[],\"clients\":[],\"counters\":{}}]\n", output());
        SameAsTelemetry.assertJson(output(), c.telemetry.table("rdma_device").orElseThrow(), null, 0);
    }

    @Test
    void devicesWithNoneIsAnEmptyJsonArray() {
        DevicesCommand c = new DevicesCommand();
        c.setAdmin(List::of);
        c.telemetry = telemetry(c.admin);
        c.setOut(out);
        c.json = true;
        c.execute();
        assertEquals("[]\n", output());
    }

    @Test
    void linkAddAndDelReportSuccessAndOneLineErrors() {
        FakeLinks links = new FakeLinks();
        assertEquals("Added soft link soft0 on 127.0.0.1\n", add(links, "soft0", "127.0.0.1"));
        assertEquals("Error: EEXIST: link soft0 already exists\n", add(links, "soft0", "127.0.0.2"));
        assertEquals("Error: EINVAL: not an IP address: 'bogus'\n", add(links, "soft1", "bogus"));
        assertEquals("Deleted soft link soft0\n", del(links, "soft0"));
        assertEquals("Error: ENOENT: no link named soft0\n", del(links, "soft0"));
        assertTrue(links.links.isEmpty());
    }

    private String add(RdmaLinkAdmin links, String name, String address) {
        bytes.reset();
        LinkAddCommand c = new LinkAddCommand();
        c.setLinkAdmin(links);
        c.setOut(out);
        c.name = name;
        c.address = address;
        c.execute();
        return output();
    }

    private String del(RdmaLinkAdmin links, String name) {
        bytes.reset();
        LinkDelCommand c = new LinkDelCommand();
        c.setLinkAdmin(links);
        c.setOut(out);
        c.name = name;
        c.execute();
        return output();
    }

    @Test
    void missingServicesGiveOneErrorLineNotCommandNotFound() {
        DevicesCommand devices = new DevicesCommand();
        devices.setOut(out);
        devices.execute();
        LinkAddCommand add = new LinkAddCommand();
        add.setOut(out);
        add.name = "soft9";
        add.address = "127.0.0.9";
        add.execute();
        LinkDelCommand del = new LinkDelCommand();
        del.setOut(out);
        del.name = "soft9";
        del.execute();
        assertEquals("Error: the RDMA device registry (rdma-core) is not running\n"
                + "Error: the soft RDMA provider (rdma-soft) is not running\n"
                + "Error: the soft RDMA provider (rdma-soft) is not running\n", output().replace("\r", ""));
    }
}
