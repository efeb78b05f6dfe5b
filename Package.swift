// swift-tools-version: 6.2
// RunLoopKit: a CFRunLoop-style run loop for Linux with a pluggable kernel wait.
//
// Backends are chosen at build time with traits. `Epoll` is the default; a build without a
// backend's trait neither compiles that backend nor needs its C library.
import PackageDescription

let package = Package(
    name: "RunLoopKit",
    products: [
        .library(name: "RunLoopKit", targets: ["RunLoopKit"]),
        // Checks a backend against the `Backend` protocol's contract; for a third-party
        // backend's tests. `RunLoopKit` does not depend on it.
        .library(name: "RunLoopKitBackendConformance", targets: ["RunLoopKitBackendConformance"]),
        // A loop's statistics exported through swift-metrics: a product of its own, so that
        // RunLoopKit itself does not depend on swift-metrics.
        .library(name: "RunLoopKitMetrics", targets: ["RunLoopKitMetrics"]),
        // A LoopThread as a swift-service-lifecycle Service: a product of its own, so that
        // RunLoopKit itself does not depend on ServiceLifecycle.
        .library(name: "RunLoopKitServiceLifecycle", targets: ["RunLoopKitServiceLifecycle"]),
        // A loop as a SwiftNIO `EventLoop`: a product of its own, so that RunLoopKit itself does
        // not depend on SwiftNIO.
        .library(name: "RunLoopKitNIO", targets: ["RunLoopKitNIO"]),
        // A loop driven by a GLib main context (a GLib or GTK program's main loop): a product of
        // its own, so that RunLoopKit itself does not need GLib. Any backend that offers the
        // embedding descriptor (epoll, io_uring) serves; it needs no trait.
        .library(name: "RunLoopKitGLib", targets: ["RunLoopKitGLib"]),
        // A loop on virtual time, for tests of code that runs on a loop: a product of its own,
        // for a test target to depend on. Any backend serves; it needs no trait.
        .library(name: "RunLoopKitTesting", targets: ["RunLoopKitTesting"]),
    ],
    traits: [
        .trait(name: "Epoll", description: "The epoll backend (Linux 5.11+ for nanosecond waits)."),
        .trait(name: "URing", description: "The io_uring backend, over liburing (Debian: liburing-dev)."),
        .trait(name: "Libevent", description: "The libevent 2.1 backend (Debian: libevent-dev)."),
        .trait(name: "GLib", description: "The GLib 2.x backend, over a GMainContext (Debian: libglib2.0-dev)."),
        .default(enabledTraits: ["Epoll"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
        // Builds the DocC catalogs: `swift package generate-documentation` (scripts/check-docs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Core's misuse reports go through a swift-log Logger (Loop.logger).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Header-only shims: a few Linux declarations Glibc's Swift module does not carry.
        .systemLibrary(name: "CRunLoopSupport", path: "Sources/CRunLoopSupport"),
        .systemLibrary(name: "CEpoll", path: "Sources/CEpoll"),
        .systemLibrary(
            name: "CLibURing",
            path: "Sources/CLibURing",
            pkgConfig: "liburing",
            providers: [.apt(["liburing-dev"])]
        ),
        .systemLibrary(
            name: "CGLib",
            path: "Sources/CGLib",
            pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        .systemLibrary(
            name: "CLibevent",
            path: "Sources/CLibevent",
            pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"])]
        ),

        .target(
            name: "RunLoopCore",
            dependencies: [
                "CRunLoopSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Core"
        ),
        // The backends: internal targets, each module named after its folder
        // (`Sources/BackendGLib` is `RunLoopBackendGLib`), so that none reads like a product
        // (the GLib backend's module is not to be mistaken for the `RunLoopKitGLib` adapter).
        .target(
            name: "RunLoopBackendEpoll",
            dependencies: ["RunLoopCore", "CEpoll"],
            path: "Sources/BackendEpoll"
        ),
        .target(
            name: "RunLoopBackendURing",
            dependencies: [
                "RunLoopCore", "CLibURing", .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Sources/BackendURing"
        ),
        .target(
            name: "RunLoopBackendLibevent",
            dependencies: ["RunLoopCore", "CLibevent"],
            path: "Sources/BackendLibevent"
        ),
        .target(
            name: "RunLoopBackendGLib",
            dependencies: ["RunLoopCore", "CGLib", "CRunLoopSupport", "RunLoopGSourceSupport"],
            path: "Sources/BackendGLib"
        ),
        // What the GLib backend and the RunLoopKitGLib adapter share: a GSource that owns a Swift
        // object, and a timerfd that ends GLib's poll at a deadline to the nanosecond. A target
        // of its own, over the GLib shim alone: the adapter is built without the GLib trait (it
        // serves epoll and io_uring loops), the backend only with it, and neither depends on the
        // other.
        .target(
            name: "RunLoopGSourceSupport",
            dependencies: ["CGLib"],
            path: "Sources/GSourceSupport"
        ),
        .target(
            name: "RunLoopKit",
            dependencies: [
                "RunLoopCore",
                .target(name: "RunLoopBackendEpoll", condition: .when(traits: ["Epoll"])),
                .target(name: "RunLoopBackendURing", condition: .when(traits: ["URing"])),
                .target(name: "RunLoopBackendLibevent", condition: .when(traits: ["Libevent"])),
                .target(name: "RunLoopBackendGLib", condition: .when(traits: ["GLib"])),
            ],
            path: "Sources/RunLoopKit"
        ),
        // The backend conformance kit: named checks any test framework can run (no Testing,
        // no XCTest).
        .target(
            name: "RunLoopKitBackendConformance",
            dependencies: ["RunLoopCore"],
            path: "Sources/BackendConformance"
        ),
        .target(
            name: "RunLoopKitMetrics",
            dependencies: ["RunLoopKit", .product(name: "CoreMetrics", package: "swift-metrics")],
            path: "Sources/Metrics"
        ),
        .target(
            name: "RunLoopKitServiceLifecycle",
            dependencies: [
                "RunLoopKit", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Adapters/ServiceLifecycle"
        ),
        .target(
            name: "RunLoopKitTesting",
            dependencies: ["RunLoopKit", "RunLoopCore"],
            path: "Sources/Testing"
        ),
        .target(
            name: "RunLoopKitNIO",
            dependencies: ["RunLoopKit", .product(name: "NIOCore", package: "swift-nio")],
            path: "Sources/Adapters/NIO"
        ),
        .target(
            name: "RunLoopKitGLib",
            dependencies: ["RunLoopKit", "CGLib", "RunLoopGSourceSupport"],
            path: "Sources/Adapters/GLib"
        ),
        // Test-only C helpers (a seccomp filter that fails one system call, as a sandbox does; the
        // GNU extensions a child process is spawned with).
        .systemLibrary(name: "CTestSupport", path: "Tests/CTestSupport"),
        // A program whose synchronous main runs Loop.main: the main-loop tests run it as a child.
        .executableTarget(
            name: "MainLoopFixture",
            dependencies: [
                "RunLoopKit", "CTestSupport", .product(name: "Logging", package: "swift-log"),
                // The GLib scenario attaches sources to GLib's default context.
                .target(name: "CGLib", condition: .when(traits: ["GLib"])),
            ],
            path: "Tests/MainLoopFixture"),
        // Programs whose main actor runs on the main loop through LoopExecutorFactory, sharing one
        // async body that checks where each await resumes: an async main built with the flag that
        // makes the compiler install the factory, the same program without it (the negative
        // control: Dispatch keeps the main actor), and a synchronous main that installs it itself.
        .target(
            name: "AsyncMainChecks", dependencies: ["RunLoopKit", "TestSupport", "CTestSupport"],
            path: "Tests/AsyncMainChecks"),
        .executableTarget(
            name: "AsyncMainFixture", dependencies: ["AsyncMainChecks", "RunLoopKit"], path: "Tests/AsyncMainFixture",
            swiftSettings: [.unsafeFlags(["-Xfrontend", "-disable-availability-checking"])]),
        .executableTarget(
            name: "AsyncMainFallbackFixture", dependencies: ["AsyncMainChecks", "RunLoopKit"],
            path: "Tests/AsyncMainFallbackFixture"),
        .executableTarget(
            name: "CreateExecutorsFixture", dependencies: ["AsyncMainChecks", "RunLoopKit"],
            path: "Tests/CreateExecutorsFixture"),
        // A program that runs one stress, fault or teardown scenario in a process of its own: the
        // tests that count descriptors or memory, lower limits or read standard error run it.
        .executableTarget(
            name: "StressFixture", dependencies: ["RunLoopKit", "TestSupport"], path: "Tests/StressFixture"),
        // A program that counts a loop's allocations per pass (polling, and sleeping until woken)
        // and per block, with the malloc interposer; it checks its counter on deliberate
        // allocations first.
        .executableTarget(
            name: "AllocationFixture",
            dependencies: [
                "RunLoopKit", "TestSupport", .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Tests/AllocationFixture"
        ),
        // The test targets' and fixtures' one support layer: the three ways to run code (on a new
        // loop's thread, off the cooperative pool, a thread joined under a deadline), latches,
        // pipes, counters, references, a seeded random generator; built on the conformance kit's
        // support (its thread, gate and pipe), not a copy of it.
        .target(
            name: "TestSupport",
            dependencies: ["RunLoopKit", "RunLoopKitBackendConformance", "RunLoopKitTesting", "CTestSupport"],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "RunLoopKit", "TestSupport", "MainLoopFixture", "StressFixture", "AsyncMainFixture",
                "AsyncMainFallbackFixture", "CreateExecutorsFixture", "RunLoopKitBackendConformance", "CTestSupport",
                // The GLib backend's tests attach GLib sources to its context; the libevent
                // backend's add events to its event_base (ForeignEvent).
                .target(name: "CGLib", condition: .when(traits: ["GLib"])),
                .target(name: "CLibevent", condition: .when(traits: ["Libevent"])),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            exclude: ["README.md"]),
        // A model of the behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md)
        // compared with Core on random operation sequences, over a scripted backend and a
        // virtual clock.
        .testTarget(
            name: "CoreTests",
            dependencies: [
                "RunLoopKit", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/CoreTests",
            exclude: ["README.md"]
        ),
        // RunLoopKitMetrics against swift-metrics' test backend.
        .testTarget(
            name: "MetricsTests",
            dependencies: [
                "RunLoopKitMetrics", "TestSupport", .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            path: "Tests/MetricsTests"
        ),
        // A program that runs a LoopThreadService under a ServiceGroup that shuts down on SIGTERM:
        // the ServiceLifecycle tests run it as a child and send it the signal.
        .executableTarget(
            name: "ServiceLifecycleFixture",
            dependencies: [
                "RunLoopKitServiceLifecycle", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ServiceLifecycleFixture"
        ),
        // RunLoopKitServiceLifecycle under a real ServiceGroup, and a SIGTERM to the fixture.
        .testTarget(
            name: "ServiceLifecycleTests",
            dependencies: [
                "RunLoopKitServiceLifecycle", "TestSupport", "ServiceLifecycleFixture",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ServiceLifecycleTests"
        ),
        // RunLoopKitNIO against SwiftNIO's own types: promises, futures and a real TCP exchange
        // on a `MultiThreadedEventLoopGroup`.
        .testTarget(
            name: "NIOAdapterTests",
            dependencies: [
                "RunLoopKitNIO", "RunLoopKitTesting", "TestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/NIOAdapterTests"
        ),
        // RunLoopKitTesting's virtual loops: time that moves only when the test moves it.
        .testTarget(
            name: "TestingTests",
            dependencies: ["RunLoopKitTesting", "RunLoopKit", "TestSupport"],
            path: "Tests/TestingTests"
        ),
        // A program whose main thread runs GLib's main loop with Loop.main attached: the GLib
        // adapter tests run it as a child (DispatchQueue.main and @MainActor need the main thread).
        .executableTarget(
            name: "GLibMainLoopFixture",
            dependencies: ["RunLoopKitGLib", "RunLoopKit", "CGLib"],
            path: "Tests/GLibMainLoopFixture"
        ),
        // RunLoopKitGLib under real GMainLoops (no display): interleaving with GLib's sources,
        // detach, idle behaviour, posts from other threads.
        .testTarget(
            name: "GLibAdapterTests",
            dependencies: ["RunLoopKitGLib", "RunLoopKit", "TestSupport", "CGLib", "GLibMainLoopFixture"],
            path: "Tests/GLibAdapterTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
