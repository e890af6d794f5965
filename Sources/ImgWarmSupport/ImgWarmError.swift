#if canImport(Glibc)
import Glibc
#endif

/// The exit statuses of the product contract (docs/cli-contract.md).
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let entriesFailed: Int32 = 1
    public static let usage: Int32 = 2
    public static let cacheUnusable: Int32 = 3
    /// imgwarm itself could not run: libcurl would not start, or an error
    /// it does not expect. Never 1, which says entries failed.
    public static let internalFailure: Int32 = 4
}

/// The one error imgwarm's commands end with: what went wrong (`Reason`,
/// carrying what the message needs), the exit status that follows from it
/// (docs/cli-contract.md), and one line naming the flag, the path, or the
/// file and line. The command-line layer maps it once (`ImgWarm.main`).
/// A store's error of the same kind fails one entry (`disk`); the run
/// stops on it only when the cache itself became unusable (`Finish`).
public struct ImgWarmError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// A flag, argument or environment value that cannot be used, or
        /// options that contradict each other; the text names them.
        case usage(String)
        /// A manifest (`warm`, `prune --keep`) that cannot be read.
        case manifestUnreadable(path: String, why: String)
        /// A `--retry-from` report that cannot be read.
        case reportUnreadable(path: String, why: String)
        /// The cache folder, a folder or file in it, or its index cannot be
        /// used; `errno` when a system call said why, else 0.
        case cacheUnusable(path: String, why: String, errno: Int32)
        /// libcurl could not be started.
        case engineUnavailable(String)
        /// The descriptor limit (`ulimit -n`) leaves too few to run at all.
        case tooFewDescriptors(limit: Int, needed: Int)
        /// An error of another library that imgwarm does not expect.
        case unexpected(String)
    }

    public let reason: Reason

    public init(_ reason: Reason) { self.reason = reason }

    /// The status the command exits with (docs/cli-contract.md).
    public var exitStatus: Int32 {
        switch reason {
        case .usage, .manifestUnreadable, .reportUnreadable: return ExitStatus.usage
        case .cacheUnusable: return ExitStatus.cacheUnusable
        case .engineUnavailable, .tooFewDescriptors, .unexpected: return ExitStatus.internalFailure
        }
    }

    /// One line: the path first where there is one.
    public var description: String {
        switch reason {
        case .usage(let text): return text
        case .manifestUnreadable(let path, let why), .reportUnreadable(let path, let why),
             .cacheUnusable(let path, let why, _):
            return "\(path): \(why)"
        case .engineUnavailable(let why): return "libcurl: \(why)"
        case .tooFewDescriptors(let limit, let needed):
            return "ulimit -n is \(limit): imgwarm needs at least \(needed) open files to run; raise it (ulimit -n 1024)"
        case .unexpected(let text): return "unexpected error: \(text)"
        }
    }

    /// The line without the path it starts with.
    public var detail: String {
        switch reason {
        case .manifestUnreadable(_, let why), .reportUnreadable(_, let why), .cacheUnusable(_, let why, _): return why
        case .usage, .engineUnavailable, .tooFewDescriptors, .unexpected: return description
        }
    }

    /// The path the error names, if any.
    public var path: String? {
        switch reason {
        case .manifestUnreadable(let path, _), .reportUnreadable(let path, _), .cacheUnusable(let path, _, _): return path
        case .usage, .engineUnavailable, .tooFewDescriptors, .unexpected: return nil
        }
    }

    /// The errno value behind a cache error; 0 for any other.
    public var errno: Int32 {
        if case .cacheUnusable(_, _, let e) = reason { return e }
        return 0
    }

    /// The filesystem is full (or the user's quota is).
    public var isDiskFull: Bool { errno == ENOSPC || errno == EDQUOT }

    // Factories under the names the call sites have always used.

    /// A value or combination of options that cannot be used (exit 2).
    public static func usage(_ text: String) -> ImgWarmError { ImgWarmError(.usage(text)) }

    /// The cache folder, or something in it, cannot be used (exit 3).
    public static func cache(path: String, reason: String, errno: Int32 = 0) -> ImgWarmError {
        ImgWarmError(.cacheUnusable(path: path, why: reason, errno: errno))
    }

    /// A manifest that cannot be read (exit 2).
    public static func manifest(path: String, reason: String) -> ImgWarmError {
        ImgWarmError(.manifestUnreadable(path: path, why: reason))
    }

    /// A `--retry-from` report that cannot be read (exit 2).
    public static func report(path: String, reason: String) -> ImgWarmError {
        ImgWarmError(.reportUnreadable(path: path, why: reason))
    }
}
