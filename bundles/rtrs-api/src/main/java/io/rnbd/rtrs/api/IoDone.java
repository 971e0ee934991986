package io.rnbd.rtrs.api;

/** Completion of one RTRS request: errno 0 on success, a positive errno otherwise. */
@FunctionalInterface
public interface IoDone {
    void done(int errno);
}
