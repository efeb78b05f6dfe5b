import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Objects › Items: a removed descriptor leaves the kernel's interest set before `invalidate()`
/// or `remove(_:from:)` returns, so its owner can close it at once.
extension Version1SourceTests {
    @Test(
        "a socket invalidated from another thread while the loop sleeps, then closed, really closes",
        .realTimeOnly(.otherThreadWhileAsleep), arguments: backends)
    func invalidateThenCloseWhileSleeping(_ backend: BackendKind) async throws {
        let (ours, peer) = try socketPair()
        defer { close(peer) }
        let outcome = try await onLoopThread(backend) { loop -> String in
            let outcome = Lock<String>("")
            let source = try Loop.Source(fileDescriptor: ours) { _ in }
            loop.add(source, to: .default)
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            let kernel = try KernelRegistrations.find(for: loop)
            let inKernel = Lock("never read")
            _ = try whenAsleep(loop) {
                source.invalidate()
                // Read before the close, which would drop an epoll entry by itself.
                inKernel.withLock { $0 = kernelAccount(kernel, holds: 1, without: ours) }
                close(ours)
                // The peer sees end of file only once nothing holds the socket open.
                outcome.withLock { $0 = waitForEndOfFile(peer) }
                loop.stop()
            }
            loop.run(timeout: generousDeadline)
            keepAlive.invalidate()
            #expect(loop.registeredDescriptorCount == 0)
            #expect(inKernel.withLock { $0 } == "as expected", "the keep-alive port's registration only")
            #expect(kernelAccount(kernel, holds: 0) == "as expected")
            return outcome.withLock { $0 }
        }
        #expect(outcome == "end of file")
    }

    @Test(
        "a socket removed while no run is active, then closed, really closes", .realTimeOnly(.kernelObject),
        arguments: backends)
    func removeThenCloseWhileIdle(_ backend: BackendKind) async throws {
        let (ours, peer) = try socketPair()
        defer { close(peer) }
        let outcome = try await onLoopThread(backend) { loop -> String in
            let source = try Loop.Source(fileDescriptor: ours) { _ in }
            loop.add(source, to: .default)
            // A poll registers the descriptor; the run then ends and nothing runs the loop.
            loop.run(timeout: .zero)
            #expect(loop.registeredDescriptorCount == 1)
            let kernel = try KernelRegistrations.find(for: loop)
            #expect(kernelAccount(kernel, holds: 1) == "as expected", "the kernel sees the registration")
            let outcome = Lock<String>("")
            let inKernel = Lock("never read")
            let done = Latch()
            _ = try TestThread {
                loop.remove(source, from: .default)
                // Read before the close, which would drop an epoll entry by itself.
                inKernel.withLock { $0 = kernelAccount(kernel, holds: 0) }
                close(ours)
                outcome.withLock { $0 = waitForEndOfFile(peer) }
                done.open()
            }
            done.wait()
            #expect(loop.registeredDescriptorCount == 0)
            #expect(inKernel.withLock { $0 } == "as expected")
            return outcome.withLock { $0 }
        }
        #expect(outcome == "end of file")
    }

    @Test("a shared file's descriptor leaves every epoll interest set before invalidate returns", arguments: backends)
    func sharedFileLeavesInterestSet(_ backend: BackendKind) async throws {
        let pipe = try Pipe()
        let duplicate = dup(pipe.readEnd)
        defer {
            close(duplicate)
            pipe.close()
        }
        var info = stat()
        fstat(pipe.readEnd, &info)
        let inode = UInt64(info.st_ino)
        let (watchedBefore, watchedAfter) = try await onLoopThread(backend) { loop in
            let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in }
            loop.add(source, to: .default)
            loop.run(timeout: .zero)
            let before = epollWatches(inode: inode)
            let done = Latch()
            _ = try TestThread {
                source.invalidate()
                done.open()
            }
            done.wait()
            return (before, epollWatches(inode: inode))
        }
        // io_uring watches with poll requests, and GLib's backend with ppoll during its waits
        // only, not an epoll set (their test is the socket's).
        if !["uring", "glib"].contains(backend.rawValue) { #expect(watchedBefore) }
        #expect(!watchedAfter)
    }
}

/// "as expected" when the kernel holds `count` registrations for the loop's sources, none of
/// them on `descriptor`; otherwise what it holds, or why it could not be read.
func kernelAccount(_ kernel: KernelRegistrations, holds count: Int, without descriptor: Int32? = nil) -> String {
    do {
        let held = try kernel.registrations()
        guard held.count == count, descriptor == nil || !held.contains(where: { $0.descriptor == descriptor }) else {
            return "\(kernel) holds \(held.count): \(held)"
        }
        return "as expected"
    } catch {
        return "\(error)"
    }
}

/// Whether any epoll instance of this process watches the file with inode `inode` (from the
/// `tfd:` lines of /proc/self/fdinfo, which name each watched file's inode in hex).
func epollWatches(inode: UInt64) -> Bool {
    let needle = "ino:" + String(inode, radix: 16)
    guard let listing = directoryListing("/proc/self/fdinfo") else { return false }
    for name in listing.names {
        guard let file = fopen("/proc/self/fdinfo/" + name, "r") else { continue }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 512)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("tfd:"), text.split(separator: " ").contains(where: { $0 == needle }) { return true }
        }
    }
    return false
}
