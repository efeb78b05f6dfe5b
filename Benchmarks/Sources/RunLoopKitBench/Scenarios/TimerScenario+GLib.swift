import CBenchGLib

/// **timer** on GLib alone (`glib`): the one-shot chain and the 1 ms grid on a `GMainLoop`.
///
/// Two one-shot rows, as the floors have several: `glib` asks as GLib programs do,
/// `g_timeout_source_new(ms)` (what `g_timeout_add` makes), with the delay rounded to whole
/// milliseconds (GLib's timeouts take nothing finer); `glib-ready-time` asks for the exact
/// microsecond with `g_source_set_ready_time` on the same kind of source. Lateness is measured
/// on CLOCK_MONOTONIC, GLib's clock (`g_get_monotonic_time`), from the instant asked for: for
/// the timeout, the time read just before the source is made, truncated to the microsecond as
/// GLib's own reading is (+ the interval), so that the figure is never biased in GLib's favour
/// and against it by under a microsecond. Either way GLib's wait takes a millisecond timeout
/// (rounded up from the ready time), which the lateness shows.
extension TimerScenario {
    /// Arms the timeouts one after another on the loop's thread; owned by that thread while
    /// armed, read after `done`.
    final class GLibChain: @unchecked Sendable {
        let context: OpaquePointer
        let delays: [UInt64]
        let exact: Bool
        let done = Probe()
        var recorder = Recorder()
        private var index = 0
        private var requested: UInt64 = 0

        init(context: OpaquePointer, delays: [UInt64], exact: Bool) {
            self.context = context
            self.delays = delays
            self.exact = exact
        }

        func arm() {
            guard index < delays.count else { return done.signal() }
            let source: UnsafeMutablePointer<GSource>
            if exact {
                let at = g_get_monotonic_time() + gint64(delays[index] / 1_000)
                requested = UInt64(at) * 1_000
                source = g_timeout_source_new(UInt32.max)
                g_source_set_ready_time(source, at)
            } else {
                let milliseconds = max((delays[index] + 500_000) / 1_000_000, 1)
                requested = Time.now() / 1_000 * 1_000 + milliseconds * 1_000_000
                source = g_timeout_source_new(UInt32(milliseconds))
            }
            g_source_set_callback(
                source,
                { data in
                    let chain = Unmanaged<GLibChain>.fromOpaque(data!).takeUnretainedValue()
                    chain.recorder.record(signed: Int64(bitPattern: Time.now() &- chain.requested))
                    chain.index += 1
                    chain.arm()
                    return GLibConstant.remove
                }, Unmanaged.passUnretained(self).toOpaque(), nil)
            g_source_attach(source, context)
            g_source_unref(source)
        }
    }

    func glibOneShot(delays: [UInt64], exact: Bool) -> Recorder {
        let host = GLibHost.start()
        let chain = GLibChain(context: host.main.context, delays: delays, exact: exact)
        host.main.perform { chain.arm() }
        _ = chain.done.wait()
        host.stop()
        return chain.recorder
    }

    /// The 1 ms grid: each tick's callback arms the next tick at the previous instant + 1 ms
    /// (`g_source_set_ready_time`). A repeating `g_timeout_add` re-arms from the time of each
    /// dispatch, so its ticks drift by each one's lateness — not the grid the others keep (as
    /// NIO's `scheduleRepeatedTask`, see `nioRepeating`).
    final class GLibGrid: @unchecked Sendable {
        let context: OpaquePointer
        let interval: UInt64
        var jitter: Jitter
        let done = Probe()
        private var next: gint64 = 0

        init(context: OpaquePointer, interval: UInt64, seconds: Double) {
            self.context = context
            self.interval = interval
            jitter = Jitter(interval: interval, seconds: seconds)
        }

        func start() {
            next = g_get_monotonic_time()
            arm()
        }

        private func arm() {
            next += gint64(interval / 1_000)
            let source = g_timeout_source_new(UInt32.max)
            g_source_set_ready_time(source, next)
            g_source_set_callback(
                source,
                { data in
                    let grid = Unmanaged<GLibGrid>.fromOpaque(data!).takeUnretainedValue()
                    if grid.jitter.tick() { grid.done.signal() } else { grid.arm() }
                    return GLibConstant.remove
                }, Unmanaged.passUnretained(self).toOpaque(), nil)
            g_source_attach(source, context)
            g_source_unref(source)
        }
    }

    func glibRepeating(interval: UInt64, seconds: Double) -> Recorder {
        let host = GLibHost.start()
        let grid = GLibGrid(context: host.main.context, interval: interval, seconds: seconds)
        host.main.perform { grid.start() }
        _ = grid.done.wait()
        host.stop()
        return grid.jitter.recorder
    }
}

/// GLib's `G_SOURCE_REMOVE` and `G_SOURCE_CONTINUE` as `gboolean`s.
enum GLibConstant {
    static let remove: gboolean = 0
    static let `continue`: gboolean = 1
}
