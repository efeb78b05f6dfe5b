#if GLib
import RunLoopKit
import RunLoopKitBackendConformance

/// Lets the conformance kit's check of rule G1 make one of the GLib backend's own sources: an
/// idle source of its context, run once.
extension GLibBackend: OwnSourcesForConformance {
    public func addReadyOwnSource(_ callback: @escaping () -> Void) {
        glibIdle(on: GLibContext(pointer: context)) {
            callback()
            return false
        }
    }
}
#endif
