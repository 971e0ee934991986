package io.rnbd.rdma.soft.internal;

/**
 * The conformance suite again with three IO threads per device: listeners on the first,
 * queue pairs spread over all three, so every contract (ordering, errors, flush on close
 * and on removal, ports freed) must hold across threads too.
 */
class SoftProviderMultiThreadConformanceTest extends SoftProviderConformanceTest {
    @Override
    protected int ioThreads() {
        return 3;
    }
}
