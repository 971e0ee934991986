package io.rnbd.rnbd.client.internal;

/**
 * The end-to-end scenario with two IO threads per soft device: the two connections of each
 * path live on different threads, so RTRS client and server get completions of one session
 * concurrently, as they do on hardware with a completion vector per CPU.
 */
class SoftRtrsMultiThreadEndToEndTest extends SoftRtrsEndToEndTest {
    @Override
    protected int ioThreads() {
        return 2;
    }
}
