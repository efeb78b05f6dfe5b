#if GLib
internal import CGLib

/// A Swift closure as a one-shot GLib callback (it returns `G_SOURCE_REMOVE`).
private final class OneShot {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

private let runOnce: GSourceFunc = { data in
    Unmanaged<OneShot>.fromOpaque(data!).takeRetainedValue().body()
    return 0
}

/// `g_idle_add` on GLib's default context.
func addGLibIdle(_ body: @escaping () -> Void) {
    g_idle_add(runOnce, Unmanaged.passRetained(OneShot(body)).toOpaque())
}

/// `g_timeout_add` on GLib's default context.
func addGLibTimeout(milliseconds: UInt32, _ body: @escaping () -> Void) {
    g_timeout_add(milliseconds, runOnce, Unmanaged.passRetained(OneShot(body)).toOpaque())
}
#endif
