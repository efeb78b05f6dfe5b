// swift-tools-version: 6.2
// RunLoopKit's examples: a package of their own, so that a package depending on RunLoopKit
// gets the library and nothing of these. Each example in Sources/ is one executable; run it from
// the repository root:
//   swift run --package-path Examples observer-activities
//
// Libraries/ holds three small libraries as a user would write them on a loop (a debounce, a
// retry with back-off, a heartbeat), tested on virtual time (RunLoopKitTesting) in Tests/:
//   swift test --package-path Examples
//
// The backend traits are passed through to RunLoopKit: `Epoll` by default (no C library
// needed); `--traits Epoll,URing,Libevent,GLib` builds all four, so that `tour uring`,
// `tour libevent` and `tour glib` can run.
import Foundation
import PackageDescription

/// The include flags of pkg-config's entry for `package` (`pkg-config --cflags-only-I`), or nil
/// when pkg-config has no such entry. For GTK 4: a system library's `pkgConfig: "gtk4"` would
/// make SwiftPM warn on every build about the other flags gtk4's entry carries (`-pthread`, and
/// graphene's `-mfpmath=sse -msse -msse2`), which it drops, and the examples build without a
/// warning.
func pkgConfigIncludeFlags(_ package: String) -> [String]? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["pkg-config", "--cflags-only-I", package]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let flags = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return String(decoding: flags, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
}

let gtkIncludeFlags = pkgConfigIncludeFlags("gtk4")

let package = Package(
    name: "RunLoopKitExamples",
    products: [
        .executable(name: "observer-activities", targets: ["ObserverActivities"]),
        .executable(name: "keep-alive-worker", targets: ["KeepAliveWorker"]),
        .executable(name: "common-mode-timers", targets: ["CommonModeTimers"]),
        .executable(name: "delayed-perform", targets: ["DelayedPerform"]),
        .executable(name: "echo-server", targets: ["EchoServer"]),
        .executable(name: "main-loop-tool", targets: ["MainLoopTool"]),
        .executable(name: "stall-monitor", targets: ["StallMonitor"]),
        .executable(name: "tour", targets: ["Tour"]),
        .executable(name: "async-port-consumer", targets: ["AsyncPortConsumer"]),
        .executable(name: "loop-service", targets: ["LoopService"]),
        .executable(name: "first-program", targets: ["FirstProgram"]),
        .executable(name: "nio-client", targets: ["NIOClient"]),
        .executable(name: "glib-main-loop", targets: ["GLibMainLoop"]),
        .executable(name: "glib-application", targets: ["GLibApplication"]),
        .executable(name: "gtk-application", targets: ["GTKApplication"]),
    ],
    traits: [
        .trait(name: "Epoll", description: "Build RunLoopKit with its epoll backend."),
        .trait(name: "URing", description: "Build RunLoopKit with its io_uring backend (Debian: liburing-dev)."),
        .trait(name: "Libevent", description: "Build RunLoopKit with its libevent backend (Debian: libevent-dev)."),
        .trait(name: "GLib", description: "Build RunLoopKit with its GLib backend (Debian: libglib2.0-dev)."),
        .default(enabledTraits: ["Epoll"]),
    ],
    dependencies: [
        .package(
            name: "RunLoopKit",
            path: "..",
            traits: [
                .trait(name: "Epoll", condition: .when(traits: ["Epoll"])),
                .trait(name: "URing", condition: .when(traits: ["URing"])),
                .trait(name: "Libevent", condition: .when(traits: ["Libevent"])),
                .trait(name: "GLib", condition: .when(traits: ["GLib"])),
            ]
        ),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(name: "ObserverActivities", dependencies: ["RunLoopKit"]),
        .executableTarget(name: "KeepAliveWorker", dependencies: ["RunLoopKit"]),
        .executableTarget(name: "CommonModeTimers", dependencies: ["RunLoopKit"]),
        .executableTarget(name: "DelayedPerform", dependencies: ["RunLoopKit"]),
        .executableTarget(name: "EchoServer", dependencies: ["RunLoopKit"]),
        // An async main on the main loop: the compiler installs the program's
        // DefaultExecutorFactory only when this module is built with availability checking
        // off (the flag turns off every availability diagnostic in this module, nothing else).
        .executableTarget(
            name: "MainLoopTool",
            dependencies: ["RunLoopKit"],
            swiftSettings: [.unsafeFlags(["-Xfrontend", "-disable-availability-checking"])]
        ),
        .executableTarget(name: "StallMonitor", dependencies: ["RunLoopKit"]),
        .executableTarget(name: "Tour", dependencies: ["RunLoopKit"]),
        .executableTarget(name: "AsyncPortConsumer", dependencies: ["RunLoopKit"]),
        .executableTarget(
            name: "LoopService",
            dependencies: [
                "RunLoopKit",
                .product(name: "RunLoopKitServiceLifecycle", package: "RunLoopKit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The README's first example, word for word (scripts/check-docs compares them).
        .executableTarget(name: "FirstProgram", dependencies: ["RunLoopKit"]),
        // A SwiftNIO client whose replies land on the main loop (RunLoopKitNIO).
        .executableTarget(
            name: "NIOClient",
            dependencies: [
                .product(name: "RunLoopKitNIO", package: "RunLoopKit"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // GLib, GObject and GIO's C API for the GLib examples (Debian: libglib2.0-dev). GIO's
        // headers sit under GLib's include directory, so glib-2.0's pkg-config entry finds them
        // (gio-2.0's adds -pthread, which SwiftPM drops with a warning); the module map links
        // the libraries.
        .systemLibrary(
            name: "CGio", path: "Shims/CGio", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // A program whose main loop is GLib's, with Loop.main attached (RunLoopKitGLib).
        .executableTarget(
            name: "GLibMainLoop",
            dependencies: ["CGio", "RunLoopKit", .product(name: "RunLoopKitGLib", package: "RunLoopKit")]
        ),
        // The GApplication program a GTK user would start from, with Loop.main attached.
        .executableTarget(
            name: "GLibApplication",
            dependencies: ["CGio", "RunLoopKit", .product(name: "RunLoopKitGLib", package: "RunLoopKit")]
        ),
        // GTK 4's C API (Debian: libgtk-4-dev), GLib's and GIO's with it, for gtk-application.
        // Its include directories come from pkg-config (above) to the example's compiler; only
        // where pkg-config has no gtk4 does SwiftPM look it up, to say which package to install.
        .systemLibrary(
            name: "CGtk", path: "Shims/CGtk", pkgConfig: gtkIncludeFlags == nil ? "gtk4" : nil,
            providers: [.apt(["libgtk-4-dev"])]),
        // A GtkApplication window whose label, button and GIO call are served by Loop.main,
        // attached to GTK's main loop; `--self-test` drives it and saves a PNG (under Xvfb).
        .executableTarget(
            name: "GTKApplication",
            dependencies: ["CGtk", "RunLoopKit", .product(name: "RunLoopKitGLib", package: "RunLoopKit")],
            swiftSettings: [.unsafeFlags((gtkIncludeFlags ?? []).flatMap { ["-Xcc", $0] })]
        ),
        // Code a user writes on a loop, each piece tested in virtual time in ExamplesTests: a
        // debounce, a retry with exponential back-off and jitter, a heartbeat that declares a
        // silent peer dead. Libraries, so outside Sources/ (which holds the executables).
        .target(name: "DebounceExample", dependencies: ["RunLoopKit"], path: "Libraries/DebounceExample"),
        .target(name: "RetryExample", dependencies: ["RunLoopKit"], path: "Libraries/RetryExample"),
        .target(name: "HeartbeatExample", dependencies: ["RunLoopKit"], path: "Libraries/HeartbeatExample"),
        // Their tests, on a VirtualLoop: minutes of each in milliseconds.
        .testTarget(
            name: "ExamplesTests",
            dependencies: [
                "DebounceExample", "RetryExample", "HeartbeatExample", "RunLoopKit",
                .product(name: "RunLoopKitTesting", package: "RunLoopKit"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
