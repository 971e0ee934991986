package io.rnbd.build;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestSummaryTest {
    @TempDir
    Path root;

    @Test
    void countsEveryTestAndNamesEachSkipWithItsReason() throws Exception {
        report("bundles/rdma-disni/target/surefire-reports", "TEST-io.rnbd.rdma.disni.DisniRxeTest.xml", """
                <testsuite name="io.rnbd.rdma.disni.DisniRxeTest" tests="3">
                  <testcase name="a" classname="io.rnbd.rdma.disni.DisniRxeTest" time="0.0">
                    <skipped type="org.opentest4j.TestAbortedException"><![CDATA[org.opentest4j.TestAbortedException: Assumption failed: RDMA_TEST_ADDR not set: no RDMA device
                	at org.junit.jupiter.api.Assumptions.throwAssumptionFailed(Assumptions.java:316)]]></skipped>
                  </testcase>
                  <testcase name="b" classname="io.rnbd.rdma.disni.DisniRxeTest" time="0.0">
                    <skipped message="RDMA_TEST_ADDR not set: no RDMA device"/>
                  </testcase>
                  <testcase name="c" classname="io.rnbd.rdma.disni.DisniRxeTest" time="0.1"/>
                </testsuite>
                """);
        report("itests/target/failsafe-reports", "TEST-io.rnbd.itests.NbdToolsIT.xml", """
                <testsuite name="io.rnbd.itests.NbdToolsIT" tests="2">
                  <testcase name="fio" classname="io.rnbd.itests.NbdToolsIT" time="0.0">
                    <skipped message="fio not installed"/>
                  </testcase>
                  <testcase name="copy" classname="io.rnbd.itests.NbdToolsIT" time="1.0">
                    <failure message="boom"/>
                  </testcase>
                </testsuite>
                """);
        Path stale = report("bench/target/surefire-reports", "TEST-io.rnbd.bench.OldTest.xml", """
                <testsuite><testcase name="x" classname="io.rnbd.bench.OldTest"><skipped message="old"/></testcase></testsuite>
                """);
        Files.setLastModifiedTime(stale, FileTime.fromMillis(1000));

        TestSummary s = new TestSummary();
        for (Path r : TestSummary.reports(root, 2000)) {
            s.read(root, r);
        }
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        s.print(new PrintStream(buf, true, StandardCharsets.UTF_8));
        String out = buf.toString(StandardCharsets.UTF_8);

        assertTrue(out.startsWith("Tests of this build: 5 run, 1 passed, 3 skipped, 1 failed\n"), out);
        assertTrue(out.contains("  bundles/rdma-disni DisniRxeTest (2 tests): RDMA_TEST_ADDR not set: no RDMA device\n"), out);
        assertTrue(out.contains("  itests NbdToolsIT: fio not installed\n"), out);
        assertEquals(-1, out.indexOf("old"), "a report older than the build: " + out);
    }

    private Path report(String dir, String name, String xml) throws Exception {
        Path d = Files.createDirectories(root.resolve(dir));
        return Files.writeString(d.resolve(name), xml);
    }
}
