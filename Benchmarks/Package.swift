// swift-tools-version: 6.2
// runloopkit-bench: RunLoopKit's benchmark harness, a package of its own so that the library's
// users never resolve its dependencies (argument parsing, HdrHistogram, SwiftNIO).
//
// It depends on RunLoopKit by path with every backend's trait, and measures them against
// CoreFoundation's run loop (Foundation), SwiftNIO's event loop, GLib's main loop and the bare
// system calls.
// Run it from the repository root with scripts/bench, or:
//   swift run -c release --package-path Benchmarks runloopkit-bench --quick
import PackageDescription

let package = Package(
    name: "RunLoopKitBench",
    products: [
        .executable(name: "runloopkit-bench", targets: ["RunLoopKitBench"])
    ],
    dependencies: [
        .package(name: "RunLoopKit", path: "..", traits: ["Epoll", "URing", "Libevent", "GLib"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Header-only: epoll, eventfd, timerfd, prctl, gettid, a CPU pause, libdispatch's
        // main-queue bridge.
        .systemLibrary(name: "CBenchSupport", path: "Sources/CBenchSupport"),
        // The io_uring timer floor, in C: liburing's header must not meet Foundation's
        // modules (see include/CBenchURing.h).
        .target(
            name: "CBenchURing",
            path: "Sources/CBenchURing",
            linkerSettings: [.linkedLibrary("uring")]
        ),
        // The wake and throughput floors, in C: an eventfd in epoll, function pointers, no
        // allocation per item, the minimal wake protocol (see include/CBenchFloor.h).
        .target(name: "CBenchFloor", path: "Sources/CBenchFloor"),
        // GLib for the `glib` subject (a GMainLoop alone); the root package's CGLib is a target,
        // not a product, so the harness has its own.
        .systemLibrary(
            name: "CBenchGLib",
            path: "Sources/CBenchGLib",
            pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        // The `glib` subject's signalled and descriptor sources, in C (GSourceFuncs).
        .target(
            name: "CBenchGLibSources",
            dependencies: ["CBenchGLib"],
            path: "Sources/CBenchGLibSources"
        ),
        .executableTarget(
            name: "RunLoopKitBench",
            dependencies: [
                "CBenchSupport",
                "CBenchFloor",
                "CBenchURing",
                "CBenchGLib",
                "CBenchGLibSources",
                .product(name: "RunLoopKit", package: "RunLoopKit"),
                .product(name: "RunLoopKitNIO", package: "RunLoopKit"),
                .product(name: "RunLoopKitGLib", package: "RunLoopKit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/RunLoopKitBench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
