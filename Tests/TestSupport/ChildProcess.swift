internal import CTestSupport
import Glibc
import RunLoopKit

/// A fixture program built next to the test bundle, started as a child process with its
/// standard output and standard error on pipes, and Swift's crash backtracer off (its report
/// is long and slow).
///
/// Not Foundation's `Process`: to close the parent's descriptors in the child, `Process.run`
/// lists `/proc/self/fd` and copies each entry's whole 256-byte name out of `readdir`'s buffer,
/// which for the buffer's last entry reads past its end. With the suite's 1,300 and more
/// descriptors open, that read crossed into an unmapped page and the test process died
/// (SIGSEGV, seen in CI). Here `posix_spawn` closes them instead (`closefrom` in the child).
public final class ChildProcess: Sendable {
    /// The child's process ID.
    public let pid: Glibc.pid_t
    /// The reading end of the child's standard output (closed by ``deinit``).
    public let output: Int32
    /// The reading end of the child's standard error (closed by ``deinit``).
    public let errors: Int32
    /// How it ended, once ``wait()`` has reaped it.
    private let ending = Lock<Ending?>(nil)

    /// How a child ended.
    public struct Ending: Sendable, Equatable, CustomStringConvertible {
        /// The exit status, or the number of the signal that ended it.
        public let status: Int32
        /// Whether a signal ended it.
        public let signalled: Bool

        public init(status: Int32, signalled: Bool) {
            self.status = status
            self.signalled = signalled
        }

        public var description: String { signalled ? "signal \(status)" : "exit status \(status)" }
    }

    /// A child could not be started; `call` failed with `errno`.
    public struct SpawnFailed: Error, CustomStringConvertible {
        public let call: String
        public let errno: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }
    }

    /// Starts `name ARGUMENTS…` from the test bundle's folder, with this process's environment
    /// and `SWIFT_BACKTRACE=enable=no`, no signal blocked and every signal's action the default.
    public init(_ name: String, _ arguments: [String] = []) throws {
        let path = try Self.bundleFolder() + "/" + name
        let outputPipe = try Self.pipe()
        let errorPipe: (read: Int32, write: Int32)
        do { errorPipe = try Self.pipe() } catch {
            close(outputPipe.read)
            close(outputPipe.write)
            throw error
        }
        defer {
            close(outputPipe.write)
            close(errorPipe.write)
        }
        do {
            pid = try Self.spawn(path, arguments, stdout: outputPipe.write, stderr: errorPipe.write)
        } catch {
            close(outputPipe.read)
            close(errorPipe.read)
            throw error
        }
        output = outputPipe.read
        errors = errorPipe.read
    }

    deinit {
        close(output)
        close(errors)
    }

    /// Starts `body` (a reader of the child's output, a watchdog) on a thread of its own. When
    /// no thread can be started, the child is killed and reaped before the error is thrown, so
    /// that none is left running.
    public func alongside(_ body: @escaping @Sendable () -> Void) throws {
        do {
            _ = try TestThread(name: "child-io", body)
        } catch {
            send(SIGKILL)
            _ = wait()
            throw error
        }
    }

    /// Sends `signal` to the child, unless it has been reaped (its ID may then be another's).
    public func send(_ signal: Int32) {
        ending.withLock { ending in
            if ending == nil { _ = kill(pid, signal) }
        }
    }

    /// Waits (blocking the calling thread) until the child exits, and reaps it; how it ended.
    /// Once reaped, the same answer again, to any thread.
    public func wait() -> Ending {
        // Waits for the exit without reaping, so that the reaping and its publication happen
        // under the lock ``send(_:)`` takes: a signal is never sent to an ID already reaped.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 {
            // ECHILD: another thread's wait reaped it; its answer is under the lock.
            if errno == ECHILD { break }
            precondition(errno == EINTR, "waitid(\(pid)) failed: \(String(cString: strerror(errno)))")
        }
        return ending.withLock { ending in
            if let ended = ending { return ended }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 {
                precondition(errno == EINTR, "waitpid(\(pid)) failed: \(String(cString: strerror(errno)))")
            }
            // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import (macros).
            let signal = status & 0x7f
            let ended =
                signal != 0 && signal != 0x7f
                ? Ending(status: signal, signalled: true) : Ending(status: (status >> 8) & 0xff, signalled: false)
            ending = ended
            return ended
        }
    }

    private static func spawn(
        _ path: String, _ arguments: [String], stdout: Int32, stderr: Int32
    ) throws
        -> pid_t
    {
        var actions = posix_spawn_file_actions_t()
        try check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the target; the pipes' own ends, and every other
        // descriptor of the test process, are closed in the child.
        try check("posix_spawn_file_actions_adddup2", posix_spawn_file_actions_adddup2(&actions, stdout, 1))
        try check("posix_spawn_file_actions_adddup2", posix_spawn_file_actions_adddup2(&actions, stderr, 2))
        try check("posix_spawn_file_actions_addclosefrom_np", rlk_test_spawn_close_from(&actions, 3))

        var attributes = posix_spawnattr_t()
        try check("posix_spawnattr_init", posix_spawnattr_init(&attributes))
        defer { posix_spawnattr_destroy(&attributes) }
        // The spawning thread may block signals (the cooperative pool's threads, and the
        // threads that inherit their mask, block SIGCHLD and others); the child starts clean.
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        try check("posix_spawnattr_setsigmask", posix_spawnattr_setsigmask(&attributes, &none))
        try check("posix_spawnattr_setsigdefault", posix_spawnattr_setsigdefault(&attributes, &all))
        try check(
            "posix_spawnattr_setflags",
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)))

        var environment: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let variable = String(cString: pointer)
            if !variable.hasPrefix("SWIFT_BACKTRACE=") { environment.append(variable) }
            entry += 1
        }
        environment.append("SWIFT_BACKTRACE=enable=no")

        var pid: pid_t = 0
        let result = withCStrings([path] + arguments) { argv in
            withCStrings(environment) { envp in
                posix_spawn(&pid, path, &actions, &attributes, argv, envp)
            }
        }
        try check("posix_spawn \(path)", result)
        return pid
    }

    /// A pipe whose both ends are closed on exec (so that no other child inherits them).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard rlk_test_pipe_closed_on_exec(&ends) == 0 else { throw SpawnFailed(call: "pipe2", errno: errno) }
        return (ends[0], ends[1])
    }

    /// The folder holding the test bundle, where the fixture programs are built.
    private static func bundleFolder() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw SpawnFailed(call: "readlink /proc/self/exe", errno: errno) }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    }

    /// Throws for a `posix_spawn*` result (they return the error number instead of setting errno).
    private static func check(_ call: String, _ result: Int32) throws {
        if result != 0 { throw SpawnFailed(call: call, errno: result) }
    }
}

/// Calls `body` with a null-terminated array of C strings copied from `strings`.
private func withCStrings<Result>(
    _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result
) -> Result {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies + [nil])
}
