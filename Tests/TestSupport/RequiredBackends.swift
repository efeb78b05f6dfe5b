import Glibc
import RunLoopKit

/// The backends a run must test: `RUNLOOPKIT_REQUIRED_BACKENDS`, a comma-separated list of
/// backend names as ``BackendKind`` spells them (`epoll,uring,libevent`), or `nil` when it is
/// not set.
///
/// Without it (a user's machine) a backend that cannot start here is skipped with its reason.
/// With it (CI: `scripts/test` sets it), a listed backend that does not start, or that the
/// build does not include, fails the run: a runner whose sandbox refuses `io_uring_setup` must
/// not turn every io_uring test into a skip and stay green.
public let requiredBackendNames: [String]? = {
    guard let text = getenv("RUNLOOPKIT_REQUIRED_BACKENDS").map({ String(cString: $0) }) else { return nil }
    return text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
}()

/// Whether `kind` must start in this run (see ``requiredBackendNames``).
public func isRequired(_ kind: BackendKind) -> Bool {
    requiredBackendNames?.contains(kind.name) ?? false
}

/// Why `kind` cannot start here, or `nil` when it can: the error its factory throws, as a
/// `BackendError` (any other error is reported as `unavailable(kind, .other(…))`).
public func unavailability(of kind: BackendKind) -> BackendError? {
    do {
        _ = try kind.factory.make()
        return nil
    } catch let error as BackendError {
        return error
    } catch {
        return .unavailable(kind, .other(error as? SystemError ?? SystemError("start", errno: 0)))
    }
}

/// The backends this build includes that can start on this machine. A test suite runs its
/// per-backend cases on these; one that cannot start is reported by ``requiredBackendFailures()``
/// when the run requires it, and skipped with its reason otherwise.
public let startableBackends: [BackendKind] = BackendKind.allCases.filter { unavailability(of: $0) == nil }

/// One line per way this run falls short of ``requiredBackendNames``: a required backend the
/// build does not include, or one that cannot start here (with the reason). Empty when every
/// required backend starts, or when none is required.
public func requiredBackendFailures() -> [String] {
    guard let names = requiredBackendNames else { return [] }
    let built = BackendKind.allCases.map(\.name)
    return names.compactMap { name in
        guard let kind = BackendKind(rawValue: name) else {
            return
                "RUNLOOPKIT_REQUIRED_BACKENDS names \(name), which this build does not include (built: \(built.joined(separator: ", ")); enable its trait)"
        }
        guard let error = unavailability(of: kind) else { return nil }
        return "RUNLOOPKIT_REQUIRED_BACKENDS requires \(name), which cannot start here: \(error)"
    }
}
