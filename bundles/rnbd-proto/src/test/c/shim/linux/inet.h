/* test shim: rnbd-proto.h includes it; nothing of it is used */
