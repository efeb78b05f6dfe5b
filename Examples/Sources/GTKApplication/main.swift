// A GTK 4 application with RunLoopKit: GtkApplication's g_application_run iterates GLib's
// default context on the main thread, and Loop.main (epoll, or io_uring), attached to that
// context before it runs, serves @MainActor code and RunLoopKit timers between GTK's own
// events, on the same thread. The window shows a label a RunLoopKit timer updates, a button
// whose handler awaits the answer of a worker LoopThread (`submit`), and the output of a GIO
// async call (g_subprocess_communicate_utf8_async), whose callback updates the window.
//
// Needs GTK 4 (Debian: libgtk-4-dev, which scripts/install-deps installs) and a display:
//   swift run --package-path Examples gtk-application
// On io_uring instead of epoll (Loop.main and the worker):
//   swift run --package-path Examples --traits Epoll,URing gtk-application uring
//
// The self test (scripts/test runs it under Xvfb) clicks the button from code, checks what the
// labels say, saves a PNG of the window to the path given and quits by itself: exit status 0
// only if every check held, 1 (naming each failed check) otherwise:
//   GSK_RENDERER=cairo GTK_A11Y=none xvfb-run -a \
//       swift run --package-path Examples gtk-application --self-test /tmp/gtk-application.png
import CGtk
import Glibc
import RunLoopKit
import RunLoopKitGLib

// MARK: - GObject plumbing

/// GTK's C casts (`GTK_WIDGET (x)`, `GTK_WINDOW (x)`, …): the same object as another of its
/// C types, which the parameter it is passed to names.
func gtk<T>(_ object: OpaquePointer) -> UnsafeMutablePointer<T> { UnsafeMutablePointer(object) }

/// Connects `handler` to a signal whose C handler takes the instance and the user data only
/// ("activate", "clicked"). GTK emits its signals on the thread that runs its main loop: the
/// main thread, so the handler is main-actor code.
@MainActor
func connect(_ instance: OpaquePointer, _ signal: String, _ handler: @escaping @MainActor () -> Void) {
    final class Handler {
        let body: @MainActor () -> Void
        init(_ body: @escaping @MainActor () -> Void) { self.body = body }
    }
    let callback: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
        let handler = Unmanaged<Handler>.fromOpaque(data!).takeUnretainedValue()
        MainActor.assumeIsolated { handler.body() }
    }
    let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
        Unmanaged<Handler>.fromOpaque(data!).release()
    }
    g_signal_connect_data(
        gpointer(instance), signal, unsafeBitCast(callback, to: GCallback.self),
        Unmanaged.passRetained(Handler(handler)).toOpaque(), release, GConnectFlags(rawValue: 0))
}

/// Runs `arguments` as a child process with GIO and hands its standard output (or the error)
/// to `completion`, which GIO calls from the context of the thread that started the call: the
/// default context, on the main thread.
@MainActor
func runWithGIO(_ arguments: [String], completion: @escaping @MainActor (Result<String, GIOError>) -> Void) {
    final class Completion {
        let body: @MainActor (Result<String, GIOError>) -> Void
        init(_ body: @escaping @MainActor (Result<String, GIOError>) -> Void) { self.body = body }
    }
    var argv: [UnsafePointer<gchar>?] = arguments.map { UnsafePointer(strdup($0)) } + [nil]
    defer { for argument in argv { free(UnsafeMutableRawPointer(mutating: argument)) } }
    var error: UnsafeMutablePointer<GError>?
    guard let process = g_subprocess_newv(&argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error) else {
        completion(.failure(GIOError(taking: error)))
        return
    }
    let callback: GAsyncReadyCallback = { process, result, data in
        let completion = Unmanaged<Completion>.fromOpaque(data!).takeRetainedValue()
        var output: UnsafeMutablePointer<gchar>?
        var error: UnsafeMutablePointer<GError>?
        let outcome: Result<String, GIOError>
        if g_subprocess_communicate_utf8_finish(OpaquePointer(process), result, &output, nil, &error) != 0 {
            outcome = .success(output.map { String(cString: $0) } ?? "")
        } else {
            outcome = .failure(GIOError(taking: error))
        }
        g_free(output)
        g_object_unref(process)
        MainActor.assumeIsolated { completion.body(outcome) }
    }
    g_subprocess_communicate_utf8_async(
        process, nil, nil, callback, Unmanaged.passRetained(Completion(completion)).toOpaque())
}

/// A GLib error's message (and the error freed).
struct GIOError: Error, CustomStringConvertible {
    let description: String
    init(taking error: UnsafeMutablePointer<GError>?) {
        description = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
        if let error { g_error_free(error) }
    }
}

// MARK: - The application

/// The work the button hands to the worker: the 10,000th prime (104,729), by trial division.
func tenThousandthPrime() -> Int {
    var primes: [Int] = []
    var candidate = 1
    while primes.count < 10_000 {
        candidate += 1
        if !primes.lazy.prefix(while: { $0 * $0 <= candidate }).contains(where: { candidate.isMultiple(of: $0) }) {
            primes.append(candidate)
        }
    }
    return candidate
}

/// The window and what it shows; all of it main-actor state, touched from GTK's signals, the
/// RunLoopKit timer, the GIO callback and the task that awaits the worker.
@MainActor
final class Window {
    let window: OpaquePointer
    let tickLabel: OpaquePointer
    let button: OpaquePointer
    let answerLabel: OpaquePointer
    let gioLabel: OpaquePointer
    private(set) var ticks = 0
    /// Whether the worker's block ran on the worker's thread, once it answered.
    private(set) var answeredOnWorker: Bool?
    /// Whether GIO's callback ran on the main thread, once it came.
    private(set) var gioCalledBackOnMain: Bool?
    /// Set when GTK destroys the window (closed, or the application quits): its widgets are
    /// gone, so nothing may touch them any more (a late answer, the next tick).
    private(set) var isClosed = false
    private var timer: Loop.Timer?

    init(application: UnsafeMutablePointer<GtkApplication>, worker: LoopThread) {
        window = OpaquePointer(gtk_application_window_new(application)!)
        gtk_window_set_title(gtk(window), "RunLoopKit in GTK 4")
        gtk_window_set_default_size(gtk(window), 440, 260)
        gtk_window_set_titlebar(gtk(window), gtk_header_bar_new())

        let box = OpaquePointer(gtk_box_new(GTK_ORIENTATION_VERTICAL, 12)!)
        for setMargin in [gtk_widget_set_margin_top, gtk_widget_set_margin_bottom] { setMargin(gtk(box), 24) }
        for setMargin in [gtk_widget_set_margin_start, gtk_widget_set_margin_end] { setMargin(gtk(box), 24) }
        gtk_window_set_child(gtk(window), gtk(box))

        let heading = OpaquePointer(gtk_label_new(nil)!)
        gtk_label_set_markup(heading, "<b>Loop.main (\(Loop.main.backend)), attached to GTK's main loop</b>")
        tickLabel = OpaquePointer(gtk_label_new("RunLoopKit timer: 0 ticks")!)
        button = OpaquePointer(gtk_button_new_with_label("Ask the worker thread")!)
        answerLabel = OpaquePointer(gtk_label_new("Answer: press the button")!)
        gioLabel = OpaquePointer(gtk_label_new("GIO: running uname -sr…")!)
        for child in [heading, tickLabel, button, answerLabel, gioLabel] { gtk_box_append(gtk(box), gtk(child)) }

        // A RunLoopKit timer on Loop.main. Written in main-actor code, its handler is
        // main-actor code: it runs on the main thread, served by GTK's main loop.
        let timer = try! Loop.Timer(after: .milliseconds(250), repeating: .milliseconds(250)) { [unowned self] _ in
            ticks += 1
            show("RunLoopKit timer: \(ticks) ticks", in: tickLabel)
        }
        Loop.main.add(timer, to: .default)
        self.timer = timer
        connect(window, "destroy") { [unowned self] in
            isClosed = true
            self.timer?.invalidate()
        }

        // The button's handler awaits the worker's answer; the main thread keeps serving GTK
        // (and the timer) meanwhile.
        connect(button, "clicked") { [unowned self] in
            gtk_widget_set_sensitive(gtk(button), 0)
            show("Answer: the worker is counting primes…", in: answerLabel)
            Task { @MainActor in
                do {
                    let workerLoop = worker.loop
                    let (prime, onWorker) = try await worker.submit {
                        (tenThousandthPrime(), Loop.currentIfCreated === workerLoop)
                    }
                    answeredOnWorker = onWorker
                    show("Answer: the worker says the 10,000th prime is \(prime)", in: answerLabel)
                } catch {
                    show("Answer: the worker did not answer (\(error))", in: answerLabel)
                }
                if !isClosed { gtk_widget_set_sensitive(gtk(button), 1) }
            }
        }

        // A GIO async call; its callback comes back on the main thread and updates the window.
        runWithGIO(["uname", "-sr"]) { [unowned self] outcome in
            gioCalledBackOnMain = pthread_equal(pthread_self(), mainThread) != 0
            switch outcome {
            case let .success(output):
                let line = output.split(separator: "\n").first.map(String.init) ?? ""
                show("GIO (uname -sr): \(line)", in: gioLabel)
            case let .failure(error):
                show("GIO failed: \(error)", in: gioLabel)
            }
        }

        gtk_window_present(gtk(window))
    }

    private func show(_ text: String, in label: OpaquePointer) {
        guard !isClosed else { return }
        gtk_label_set_text(label, text)
    }

    func text(of label: OpaquePointer) -> String { String(cString: gtk_label_get_text(label)) }
}

// MARK: - The self test

/// Drives the window as a person would, checks what it shows, saves a PNG of it and answers the
/// checks that failed (none: every check held).
@MainActor
func selfTest(_ window: Window, png path: String) async -> [String] {
    var failures: [String] = []
    func check(_ name: String, _ holds: Bool, _ detail: @autoclosure () -> String = "") {
        if holds {
            print("ok: \(name)")
        } else {
            print("FAILED: \(name)\(detail().isEmpty ? "" : ": \(detail())")")
            failures.append(name)
        }
    }
    /// Waits (serving GTK and the loop meanwhile) until `condition` holds, at most `seconds`.
    func wait(seconds: Int, until condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    check(
        "the window is shown",
        await wait(seconds: 10) { gtk_widget_get_mapped(gtk(window.window)) != 0 })

    check("the timer ticked 3 times", await wait(seconds: 10) { window.ticks >= 3 }, "\(window.ticks) ticks")
    let ticksLabel = window.text(of: window.tickLabel)
    check(
        "the timer's label shows its ticks", ticksLabel == "RunLoopKit timer: \(window.ticks) ticks",
        "the label says \"\(ticksLabel)\" after \(window.ticks) ticks")

    // A click from code: "activate" presses the button, which then emits "clicked".
    gtk_widget_activate(gtk(window.button))
    let answer = "Answer: the worker says the 10,000th prime is 104729"
    check(
        "the button's answer is shown",
        await wait(seconds: 20) { window.text(of: window.answerLabel) == answer },
        "the label says \"\(window.text(of: window.answerLabel))\"")
    check("the answer was computed on the worker's thread", window.answeredOnWorker == true)

    check(
        "GIO's output is shown",
        await wait(seconds: 10) { window.text(of: window.gioLabel).hasPrefix("GIO (uname -sr): Linux ") },
        "the label says \"\(window.text(of: window.gioLabel))\"")
    check("GIO called back on the main thread", window.gioCalledBackOnMain == true)

    // Lets GTK lay out and draw the last texts before the picture is taken.
    try? await Task.sleep(for: .milliseconds(300))
    let saved = savePNG(of: window.window, to: path)
    check("the window is saved as a PNG", saved == nil, saved ?? "")
    if saved == nil { print("the window: \(path)") }
    return failures
}

/// Renders `window` as it is on screen and saves it as a PNG; answers what went wrong, if
/// anything did.
@MainActor
func savePNG(of window: OpaquePointer, to path: String) -> String? {
    let widget: UnsafeMutablePointer<GtkWidget> = gtk(window)
    let width = gtk_widget_get_width(widget)
    let height = gtk_widget_get_height(widget)
    guard width > 0, height > 0 else { return "the window has no size" }
    let paintable = gtk_widget_paintable_new(widget)
    defer { g_object_unref(gpointer(paintable)) }
    let snapshot = gtk_snapshot_new()
    gdk_paintable_snapshot(paintable, snapshot, Double(width), Double(height))
    guard let node = gtk_snapshot_free_to_node(snapshot) else { return "the window drew nothing" }
    defer { gsk_render_node_unref(node) }
    guard let renderer = gtk_native_get_renderer(gtk_widget_get_native(widget)) else {
        return "the window has no renderer"
    }
    var bounds = graphene_rect_t(
        origin: graphene_point_t(x: 0, y: 0), size: graphene_size_t(width: Float(width), height: Float(height)))
    guard let texture = gsk_renderer_render_texture(renderer, node, &bounds) else {
        return "the renderer made no texture"
    }
    defer { g_object_unref(gpointer(texture)) }
    guard gdk_texture_save_to_png(texture, path) != 0 else { return "could not write \(path)" }
    return nil
}

// MARK: - main

// Usage: gtk-application [epoll|uring] [--self-test PNG]; without a backend, the build's default.
let mainThread = pthread_self()
var arguments = CommandLine.arguments.dropFirst()
if let backend = arguments.first, !backend.hasPrefix("--") {
    arguments.removeFirst()
    guard let kind = BackendKind(rawValue: backend) else {
        print("gtk-application: unknown backend '\(backend)'")
        exit(2)
    }
    do {
        // Made before anything asks for Loop.main, the main thread's loop is on `kind`.
        _ = try Loop.current(backend: kind)
    } catch {
        print("gtk-application: \(error)")
        exit(1)
    }
}
let selfTestPNG: String? =
    arguments.first == "--self-test" ? (arguments.dropFirst().first ?? "/tmp/gtk-application.png") : nil

// The worker: a thread whose loop (on Loop.main's backend) waits for blocks; the button's
// handler submits to it.
let worker = try LoopThread(name: "worker", backend: Loop.main.backend)

// NON_UNIQUE: no D-Bus name to own, so that it also runs without a session bus (under Xvfb).
let application = gtk_application_new("org.runloopkit.GTKApplication", G_APPLICATION_NON_UNIQUE)!
let gApplication: UnsafeMutablePointer<GApplication> = gtk(OpaquePointer(application))

// Loop.main joins GLib's default context before GTK iterates it, on the main thread (a loop
// whose backend has no descriptor to give GLib, libevent's or GLib's own, cannot).
let attachment: GLibAttachment
do {
    attachment = try Loop.main.attach(to: .default)
} catch {
    print("gtk-application: cannot attach Loop.main (\(Loop.main.backend)) to GLib: \(error)")
    exit(1)
}

var failures: [String] = []
var window: Window?
connect(OpaquePointer(application), "activate") {
    // Activated again (a second launch of a unique application): the window comes forward.
    if let window {
        gtk_window_present(gtk(window.window))
        return
    }
    let shown = Window(application: application, worker: worker)
    window = shown
    guard let selfTestPNG else { return }
    Task { @MainActor in
        failures = await selfTest(shown, png: selfTestPNG)
        g_application_quit(gApplication)
    }
}

// Not argc/argv: GApplication would take the self test's arguments for files to open.
let status = g_application_run(gApplication, 0, nil)
attachment.detach()
window = nil
g_object_unref(gpointer(application))
worker.stop()

if selfTestPNG != nil {
    if failures.isEmpty {
        print("self test: every check held")
    } else {
        print("self test: \(failures.count) check(s) failed: \(failures.joined(separator: "; "))")
        exit(1)
    }
}
exit(status)
