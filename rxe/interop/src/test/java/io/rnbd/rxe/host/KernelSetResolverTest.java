package io.rnbd.rxe.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rule that picks the rxe guest's kernel set (rxe/lib/resolve-kernel.sh), run on the
 * host against archives recorded on 2026-11-29 (rxe/lib/apt-cache-canned.sh answers its
 * queries): no network. The expected picks are read off those archives by hand, not from
 * the resolver. Each drift case edits a copy of a recorded archive the way Debian's has
 * moved: a piece at another revision, a piece dropped, a metapackage ahead of its image.
 */
class KernelSetResolverTest {
    private static final Path LIB = Path.of(System.getProperty("rxe.lib", "../lib")).toAbsolutePath().normalize();
    private static final Path ARCHIVES = Path.of("src/test/resources/kernel-archives").toAbsolutePath();

    @TempDir
    Path tmp;

    /** Issue 33 as it happened: kbuild at 6.1.192-3 beside the image and headers at -2. */
    @Test
    void todaysBookwormDriftTakesKbuildOfTheSameUpstreamAndTheImagesOwnSource() {
        Result r = resolve(archive("bookworm-2026-11-29"));
        r.assertOk();
        assertEquals("linux-image-6.1.0-56-amd64", r.get("KPKG"));
        assertEquals("6.1.0-56-amd64", r.get("KVER"));
        assertEquals("6.1.192-2", r.get("IMGVER"));
        assertEquals("linux-headers-6.1.0-56-amd64", r.get("HEADERS"));
        assertEquals("linux-headers-6.1.0-56-common", r.get("COMMON"));
        assertEquals("linux-kbuild-6.1", r.get("KBUILD"));
        assertEquals("6.1.192-3", r.get("KBUILDVER"));
        assertEquals("linux-source-6.1", r.get("SOURCE"));
        assertEquals("6.1.192-2", r.get("SOURCEVER"), "the image's own revision of the source is still offered");
        assertEquals("gcc-12", r.get("COMPILER"));
        r.assertSaid("linux-kbuild-6.1 at 6.1.192-3");
    }

    @Test
    void sourceAtTheImagesRevisionDroppedTakesTheNewestOfTheSameUpstream() {
        Path a = archive("bookworm-2026-11-29");
        dropLines(a, "madison/linux-source-6.1", " 6.1.192-2 |");
        Result r = resolve(a);
        r.assertOk();
        assertEquals("6.1.192-2", r.get("IMGVER"));
        assertEquals("6.1.192-3", r.get("SOURCEVER"));
        r.assertSaid("linux-source-6.1 at 6.1.192-3");
    }

    @Test
    void noSourceOfTheImagesUpstreamFallsBackToTheNewestCompleteSet() {
        Path a = archive("bookworm-2026-11-29");
        dropLines(a, "madison/linux-source-6.1", " 6.1.192-");
        Result r = resolve(a);
        r.assertOk();
        assertEquals("6.1.0-50-amd64", r.get("KVER"));
        assertEquals("6.1.176-1", r.get("IMGVER"));
        assertEquals("6.1.176-1", r.get("KBUILDVER"));
        assertEquals("6.1.176-1", r.get("SOURCEVER"));
        r.assertSaid("pass over linux-image-amd64 6.1.192-2: no linux-source-6.1 of upstream 6.1.192");
    }

    @Test
    void metapackageAheadOfItsImageIsPassedOver() {
        Path a = archive("bookworm-2026-11-29");
        append(a, "madison/linux-image-amd64",
                "linux-image-amd64 |  6.1.195-1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n");
        write(a, "show/linux-image-amd64=6.1.195-1",
                "Package: linux-image-amd64\nSource: linux-signed-amd64 (6.1.195+1)\nVersion: 6.1.195-1\n"
                        + "Depends: linux-image-6.1.0-57-amd64 (= 6.1.195-1)\n\n");
        Result r = resolve(a);
        r.assertOk();
        assertEquals("6.1.0-56-amd64", r.get("KVER"));
        assertEquals("6.1.192-2", r.get("IMGVER"));
        r.assertSaid("pass over linux-image-amd64 6.1.195-1: linux-image-6.1.0-57-amd64 6.1.195-1 is not in the archive");
    }

    /** The headers carry .config and Module.symvers: the vermagic and the ABI. No other revision will do. */
    @Test
    void headersAtAnotherRevisionThanTheImageAreRefused() {
        Path a = archive("bookworm-2026-11-29");
        replaceIn(a, "madison/linux-headers-6.1.0-56-amd64", "6.1.192-2", "6.1.192-3");
        Result r = resolve(a);
        r.assertOk();
        assertEquals("6.1.176-1", r.get("IMGVER"));
        r.assertSaid("pass over linux-image-amd64 6.1.192-2: linux-headers-6.1.0-56-amd64 6.1.192-2 is not in the archive (offered: 6.1.192-3)");
    }

    @Test
    void kbuildOfAnotherUpstreamOrBelowTheHeadersRelationIsRefused() {
        Path a = archive("bookworm-2026-11-29");
        // only a newer upstream and an older revision than the headers' ">= 6.1.192-2" allows
        write(a, "madison/linux-kbuild-6.1",
                "linux-kbuild-6.1 |  6.1.195-1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n"
                        + "linux-kbuild-6.1 |  6.1.192-1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n"
                        + "linux-kbuild-6.1 |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n");
        Result r = resolve(a);
        r.assertOk();
        assertEquals("6.1.176-1", r.get("IMGVER"));
        r.assertSaid("no linux-kbuild-6.1 of upstream 6.1.192 satisfying (>= 6.1.192-2)");
    }

    @Test
    void noCompleteSetAnywhereFailsLoudlyWithEveryReason() {
        Path a = archive("bookworm-2026-11-29");
        write(a, "madison/linux-source-6.1", "");
        Result r = resolve(a);
        assertEquals(1, r.rc, r.err);
        assertTrue(r.out.isBlank(), "nothing sourceable on a failure: " + r.out);
        r.assertSaid("FAILED: no version of linux-image-amd64 has a complete kernel set");
        r.assertSaid("linux-image-amd64 6.1.192-2: no linux-source-6.1 of upstream 6.1.192 (offered: nothing)");
        r.assertSaid("linux-image-amd64 6.1.176-1: no linux-source-6.1 of upstream 6.1.176 (offered: nothing)");
    }

    @Test
    void emptyArchiveSaysSo() {
        Result r = resolve(tmp.resolve("empty"));
        assertEquals(1, r.rc);
        r.assertSaid("FAILED: linux-image-amd64 is not in the archive");
    }

    /** RXE_KERNEL=backports: 6.12 built for bookworm, with bookworm's compiler. */
    @Test
    void bookwormBackports() {
        Result r = resolve(archive("bookworm-backports-2026-11-29"));
        r.assertOk();
        assertEquals("6.12.95+deb12-amd64", r.get("KVER"));
        assertEquals("6.12.95-1~bpo12+1", r.get("IMGVER"));
        assertEquals("linux-kbuild-6.12.95+deb12", r.get("KBUILD"));
        assertEquals("6.12.95-1~bpo12+1", r.get("KBUILDVER"));
        assertEquals("linux-source-6.12", r.get("SOURCE"));
        assertEquals("6.12.95-1~bpo12+1", r.get("SOURCEVER"));
        assertEquals("gcc-12", r.get("COMPILER"));
    }

    /** RXE_KERNEL=trixie: Debian 13's kernel, security update over the point release. */
    @Test
    void trixieTakesTheSecurityUpdate() {
        Result r = resolve(archive("trixie-2026-11-29"));
        r.assertOk();
        assertEquals("6.12.118+deb13-amd64", r.get("KVER"));
        assertEquals("6.12.118-1", r.get("IMGVER"));
        assertEquals("linux-kbuild-6.12.118+deb13", r.get("KBUILD"));
        assertEquals("gcc-14", r.get("COMPILER"));
    }

    /** RXE_KERNEL=unstable: 7.2, whose headers ask for gcc-16-for-host (not on a bookworm host). */
    @Test
    void unstable() {
        Result r = resolve(archive("sid-2026-11-29"));
        r.assertOk();
        assertEquals("linux-image-7.2.13+deb14-amd64", r.get("KPKG"));
        assertEquals("7.2.13-1", r.get("IMGVER"));
        assertEquals("linux-headers-7.2.13+deb14-common", r.get("COMMON"));
        assertEquals("linux-kbuild-7.2.13+deb14", r.get("KBUILD"));
        assertEquals("linux-source-7.2", r.get("SOURCE"));
        assertEquals("gcc-16-for-host", r.get("COMPILER"));
        assertEquals("linux-base-7.2.13+deb14-amd64 linux-binary-7.2.13+deb14-amd64 linux-modules-7.2.13+deb14-amd64",
                r.get("IMGPARTS"), "7.x's image package is empty: vmlinuz and the modules are its parts");
    }

    /** RXE_KERNEL=newest: unstable and experimental together, experimental's 7.3 release candidate is newer. */
    @Test
    void newestTakesExperimentalWhenItIsAhead() {
        Result r = resolve(archive("newest-2026-11-29"));
        r.assertOk();
        assertEquals("7.3-amd64", r.get("KVER"));
        assertEquals("7.3~rc7-1~exp1", r.get("IMGVER"));
        assertEquals("linux-source-7.3", r.get("SOURCE"), "the series of 7.3~rc7 is 7.3");
        assertEquals("7.3~rc7-1~exp1", r.get("SOURCEVER"));
        assertEquals("linux-base-7.3-amd64 linux-binary-7.3-amd64 linux-modules-7.3-amd64", r.get("IMGPARTS"));
    }

    /** An image whose vmlinuz (or modules) package is not in the archive yet is no image to boot. */
    @Test
    void anImageMissingOneOfItsPartsIsPassedOver() {
        Path a = archive("newest-2026-11-29");
        write(a, "madison/linux-modules-7.3-amd64", "");
        Result r = resolve(a);
        r.assertOk();
        assertEquals("7.2.13+deb14-amd64", r.get("KVER"));
        r.assertSaid("pass over linux-image-amd64 7.3~rc7-1~exp1: linux-modules-7.3-amd64 7.3~rc7-1~exp1 (a part of linux-image-7.3-amd64) is not in the archive");
    }

    /** Before 7.x (6.1, 6.12) the image package holds everything: no parts. */
    @Test
    void sixOneAndSixTwelveImagesHaveNoParts() {
        assertEquals("", resolve(archive("bookworm-2026-11-29")).get("IMGPARTS"));
        assertEquals("", resolve(archive("bookworm-backports-2026-11-29")).get("IMGPARTS"));
    }

    @Test
    void newestFallsBackToUnstableWhenExperimentalIsIncomplete() {
        Path a = archive("newest-2026-11-29");
        write(a, "madison/linux-kbuild-7.3", "");
        Result r = resolve(a);
        r.assertOk();
        assertEquals("7.2.13+deb14-amd64", r.get("KVER"));
        r.assertSaid("pass over linux-image-amd64 7.3~rc7-1~exp1: no linux-kbuild-7.3 of upstream 7.3~rc7");
    }

    // ---------------------------------------------------------------------------------------

    private Path archive(String name) {
        Path to = tmp.resolve(name);
        try (Stream<Path> files = Files.walk(ARCHIVES.resolve(name))) {
            for (Path f : files.collect(Collectors.toList())) {
                Path t = to.resolve(ARCHIVES.resolve(name).relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(f, t);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return to;
    }

    private static void dropLines(Path archive, String file, String containing) {
        Path f = archive.resolve(file);
        List<String> kept = lines(f).stream().filter(l -> !l.contains(containing)).collect(Collectors.toList());
        assertTrue(kept.size() < lines(f).size(), file + " has no line with " + containing);
        write(archive, file, kept.stream().map(l -> l + "\n").collect(Collectors.joining()));
    }

    private static void replaceIn(Path archive, String file, String from, String to) {
        String s = String.join("\n", lines(archive.resolve(file))) + "\n";
        assertTrue(s.contains(from), file + " has no " + from);
        write(archive, file, s.replace(from, to));
    }

    private static List<String> lines(Path f) {
        try {
            return Files.readAllLines(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path archive, String file, String content) {
        try {
            Files.createDirectories(archive.resolve(file).getParent());
            Files.writeString(archive.resolve(file), content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void append(Path archive, String file, String content) {
        try {
            Files.writeString(archive.resolve(file), content, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Result resolve(Path archive) {
        try {
            ProcessBuilder pb = new ProcessBuilder("bash", LIB.resolve("resolve-kernel.sh").toString());
            pb.environment().put("APT_CACHE", LIB.resolve("apt-cache-canned.sh").toString());
            pb.environment().put("CANNED_DIR", archive.toString());
            pb.environment().remove("CANNED_RECORD");
            Path out = tmp.resolve("out.txt");
            Path err = tmp.resolve("err.txt");
            pb.redirectOutput(out.toFile()).redirectError(err.toFile());
            Process p = pb.start();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "resolve-kernel.sh did not finish in 120 s");
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static final class Result {
        final int rc;
        final String out;
        final String err;
        final Map<String, String> vars = new LinkedHashMap<>();

        Result(int rc, String out, String err) {
            this.rc = rc;
            this.out = out;
            this.err = err;
            for (String l : out.split("\n")) {
                int eq = l.indexOf('=');
                if (eq > 0 && !l.startsWith("#")) {
                    // printf %q: backslash escapes, '' for empty
                    String v = l.substring(eq + 1).replace("\\~", "~").replace("\\+", "+").replace("\\ ", " ");
                    vars.put(l.substring(0, eq), v.equals("''") ? "" : v);
                }
            }
        }

        void assertOk() {
            assertEquals(0, rc, "resolve-kernel.sh failed: " + err);
        }

        String get(String key) {
            assertTrue(vars.containsKey(key), key + " not in the output: " + out);
            return vars.get(key);
        }

        void assertSaid(String text) {
            assertTrue(err.contains(text), "stderr lacks '" + text + "':\n" + err);
        }
    }
}
