#!/usr/bin/env python3
"""Writes the fuzzers' seed inputs from the golden bytes of the decoders' own tests.

Each seed below is copied verbatim from the golden-bytes test named beside it (Linux's
structs as gcc laid them out, the NBD spec's examples), so the fuzzers start from what real
peers send. Hex: spaces ignored, "zN" is N zero bytes. Tests whose first byte picks the
decoder get that byte in front. Run from the repository root; commit what it writes.
"""
import os

RES = "fuzz/src/test/resources"

# (test class path, method, selector byte or None, seed name, hex, source)
SEEDS = [
    # bundles/rtrs-proto/src/test/java/io/rnbd/rtrs/proto/GoldenBytesTest.java
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "privateData", None, "linux-con-req",
     "0000bd1b0002010003000200ffeeddcc bbaa9988776655443322110000112233 445566778899aabbccddeeff01000000 0000000000000000"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "privateData", None, "linux-con-rsp", "bd1b00020000000200f0010000100000 02 z39"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "privateData", None, "linux-con-rej", "bd1b0002f0ff z50"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "privateData", None, "ext-con-rsp", "bd1b00020000000200f0010000100000 02050000 z36"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "privateData", None, "ext-con-rej-dnr", "bd1b 0002 f0ff 0000 00000000 00000000 00020000 z36"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 1, "info-req", "0000 6162 z268"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 0x12, "info-rsp",
     "01000200000000008877665544332211 efbeadde000002001000000000000000 0700000000000004"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 3, "read", "0300200001000100005034128088ffff cdab341200100000"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 4, "write", "02002000"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 5, "rkey-rsp", "0400ff0102cdab00"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 6, "auth", "0500 0000 01 00 0300 63686170 z12 010203"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 6, "auth-final", "0500 8100 02 00 0000 63686170 z12"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 7, "fence-req", "0600 0201 07000000 ffeeddccbbaa99887766554433221100"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 8, "fence-rsp", "0700 0000 07000000 03000000 01000000"),
    ("io/rnbd/rtrs/proto/RtrsProtoFuzzTest", "messages", 0, "peek-read", "0300200001000100005034128088ffff cdab341200100000"),
    # bundles/rnbd-proto/src/test/java/io/rnbd/rnbd/proto/LinuxGoldenBytesTest.java
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 1, "linux-sess-info", "00000000020000000000000000000000 00000000000000000000000000000000 00000000"),
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 3, "linux-open", "0200000001002f6465762f72616d3000 z248"),
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 4, "linux-open-rsp",
     "03000000030000000000020000000000 ff00000000000000ffff3f0000100000 00000000001000028000000000030000 0000000000000000"),
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 5, "linux-io-fua-write", "04000000030000009a78563412000000 01030000001000000340000000000000"),
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 5, "linux-flush", "0400000003000000ffffffffffffffff 02030000000000000000000000000000"),
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 5, "mainline-write-zeroes", "04000000030000000000000000000000 05080000001000000000000000000000"),
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 6, "linux-close", "0500000007000000"),
    ("io/rnbd/rnbd/proto/RnbdProtoFuzzTest", "messages", 0, "peek-io", "04000000030000009a78563412000000 01030000001000000340000000000000"),
    # bundles/rtrs-auth-chap/src/test/java/io/rnbd/rtrs/auth/chap/internal/msg/ChapMessageTest.java
    ("io/rnbd/rtrs/auth/chap/internal/ChapFuzzTest", "messages", None, "negotiate", "00013412 03020200 030201 0100 6162"),
    ("io/rnbd/rtrs/auth/chap/internal/ChapFuzzTest", "messages", None, "challenge",
     "01010201 01002000 d4c3b2a1 0000 0100 " + "11" * 32 + " 74"),
    ("io/rnbd/rtrs/auth/chap/internal/ChapFuzzTest", "messages", None, "reply",
     "02010201 20010200 05000000 " + "22" * 32 + " " + "33" * 32 + " aabb"),
    ("io/rnbd/rtrs/auth/chap/internal/ChapFuzzTest", "messages", None, "success1", "03010201 01200000 " + "44" * 32),
    ("io/rnbd/rtrs/auth/chap/internal/ChapFuzzTest", "messages", None, "success1-empty", "03010201 00000000"),
    ("io/rnbd/rtrs/auth/chap/internal/ChapFuzzTest", "messages", None, "success2", "04010201"),
    ("io/rnbd/rtrs/auth/chap/internal/ChapFuzzTest", "messages", None, "failure1", "f1010700 7e000000"),
    # bundles/nbd-proto/src/test/java/io/rnbd/nbd/proto/ProtoGoldenBytesTest.java
    ("io/rnbd/nbd/proto/NbdProtoFuzzTest", "records", 0, "client-flags", "00000002"),
    ("io/rnbd/nbd/proto/NbdProtoFuzzTest", "records", 1, "option-header", "49484156454f5054 00000007 0000000c"),
    ("io/rnbd/nbd/proto/NbdProtoFuzzTest", "records", 1, "option-header-max", "49484156454f5054 00000001 ffffffff"),
    ("io/rnbd/nbd/proto/NbdProtoFuzzTest", "records", 2, "go-request", "00000002 6162 0002 0003 0001"),
    ("io/rnbd/nbd/proto/NbdProtoFuzzTest", "records", 2, "go-request-empty", "00000000 0000"),
    ("io/rnbd/nbd/proto/NbdProtoFuzzTest", "records", 3, "request", "25609513 0001 0001 0102030405060708 0000000000001000 00000200"),
    ("io/rnbd/nbd/proto/NbdProtoFuzzTest", "records", 3, "request-max-len", "25609513 0000 0000 0000000000000000 0000000000000000 ffffffff"),
]


def parse(spec):
    out = ""
    for tok in spec.split():
        out += "00" * int(tok[1:]) if tok.startswith("z") else tok
    return bytes.fromhex(out)


def main():
    for cls, method, sel, name, spec in SEEDS:
        d = os.path.join(RES, cls + "Inputs", method)
        os.makedirs(d, exist_ok=True)
        data = parse(spec)
        if sel is not None:
            data = bytes([sel]) + data
        with open(os.path.join(d, "golden-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
