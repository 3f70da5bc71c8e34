import CNodesMemory

/// The calling thread's stack, as the tracker's own threads leave it.
package enum ThreadStack {
    /// Overwrites the part of the calling thread's stack just below its current frame, where
    /// calls that have returned leave copies of the references they used. A thread that looked
    /// at watched objects (the release poller, the grace timer) calls it before it sleeps, so
    /// that the retainer analysis does not mistake those dead copies for a holder.
    package static func scrub() {
        cnm_scrub_stack(16_384)
    }
}
