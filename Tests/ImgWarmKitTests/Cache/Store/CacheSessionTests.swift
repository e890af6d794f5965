import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
#if canImport(Glibc)
import Glibc
#endif

/// What `CacheSession` does to a cache before a command's work, by purpose
/// and by what the folder holds: what it creates, whether it opens the
/// state database, whether it holds the run lock, and when it refuses.
@Suite struct CacheSessionTests {
    enum Holds: String, Sendable, CustomStringConvertible {
        /// No folder at the path.
        case nothing
        /// An empty folder no imgwarm run has used.
        case emptyFolder
        /// A folder a warm has used: `.imgwarm` with the state database.
        case usedCache
        var description: String { rawValue }
    }

    /// `CacheSession.Purpose`, by name (test arguments are Sendable).
    enum Purpose: String, Sendable, CustomStringConvertible {
        case warm, warmDryRun, prune, pruneDryRun
        var value: CacheSession.Purpose {
            switch self {
            case .warm: return .warm
            case .warmDryRun: return .warmDryRun
            case .prune: return .prune
            case .pruneDryRun: return .pruneDryRun
            }
        }
        var description: String { rawValue }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let purpose: Purpose
        let holds: Holds
        /// nil: the session opens; else the errno of the refusal.
        let refusedWith: Int32?
        let stateOpen: Bool
        let stateFolderAfter: Bool
        let locks: Bool
        var testDescription: String { "\(purpose) on \(holds)" }
    }

    static let cases: [Case] = [
        // warm makes what is missing, opens the state and locks shared.
        .init(purpose: .warm, holds: .nothing, refusedWith: nil, stateOpen: true, stateFolderAfter: true, locks: true),
        .init(purpose: .warm, holds: .emptyFolder, refusedWith: nil, stateOpen: true, stateFolderAfter: true, locks: true),
        .init(purpose: .warm, holds: .usedCache, refusedWith: nil, stateOpen: true, stateFolderAfter: true, locks: true),
        // A dry run changes nothing: the state is read only where it is.
        .init(purpose: .warmDryRun, holds: .nothing, refusedWith: nil, stateOpen: false, stateFolderAfter: false, locks: false),
        .init(purpose: .warmDryRun, holds: .emptyFolder, refusedWith: nil, stateOpen: false, stateFolderAfter: false, locks: false),
        .init(purpose: .warmDryRun, holds: .usedCache, refusedWith: nil, stateOpen: true, stateFolderAfter: true, locks: false),
        // prune needs the folder, keeps no state, and locks only a cache
        // imgwarm has used (it makes no lock file of its own).
        .init(purpose: .prune, holds: .nothing, refusedWith: ENOENT, stateOpen: false, stateFolderAfter: false, locks: false),
        .init(purpose: .prune, holds: .emptyFolder, refusedWith: nil, stateOpen: false, stateFolderAfter: false, locks: false),
        .init(purpose: .prune, holds: .usedCache, refusedWith: nil, stateOpen: false, stateFolderAfter: true, locks: true),
        .init(purpose: .pruneDryRun, holds: .nothing, refusedWith: ENOENT, stateOpen: false, stateFolderAfter: false, locks: false),
        .init(purpose: .pruneDryRun, holds: .emptyFolder, refusedWith: nil, stateOpen: false, stateFolderAfter: false, locks: false),
        .init(purpose: .pruneDryRun, holds: .usedCache, refusedWith: nil, stateOpen: false, stateFolderAfter: true, locks: false),
    ]

    /// A cache folder holding `holds`, inside a temp folder removed at the end.
    static func cache(_ holds: Holds, in dir: String) throws -> DiskCache {
        let path = dir + "/cache"
        switch holds {
        case .nothing: break
        case .emptyFolder: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case .usedCache: _ = try CacheSession(DiskCache(directory: path), for: .warm)
        }
        return DiskCache(directory: path)
    }

    /// Whether another run could take the lock `cache clear --all` takes.
    static func exclusiveLockIsFree(_ cache: DiskCache) throws -> Bool {
        let probe = DiskCache(directory: cache.directory)
        try probe.openExisting()
        do {
            _ = try CacheLock(cache: probe, mode: .exclusive)
            return true
        } catch let error as ImgWarmError where error.errno == EWOULDBLOCK {
            return false
        }
    }

    /// Opens a session as `c` says and checks it while it lives; false
    /// when it was refused (as expected or not: recorded).
    static func checkOpenSession(_ c: Case, _ cache: DiskCache) throws -> Bool {
        let session: CacheSession
        do {
            session = try CacheSession(cache, for: c.purpose.value)
        } catch let error as ImgWarmError {
            #expect(c.refusedWith == error.errno, "\(error)")
            #expect(error.description.hasPrefix(cache.directory + ": "), "\(error)")
            #expect(error.exitStatus == 3)
            #expect(!FileManager.default.fileExists(atPath: cache.directory), "a refused session made the folder")
            return false
        }
        #expect(c.refusedWith == nil, "opened where a refusal was expected")
        #expect((session.state != nil) == c.stateOpen)
        #expect(FileManager.default.fileExists(atPath: cache.stateDirectory) == c.stateFolderAfter)
        if c.stateFolderAfter {
            #expect(try exclusiveLockIsFree(cache) == !c.locks)
        }
        return true
    }

    @Test(arguments: cases) func sessionByPurposeAndFolder(_ c: Case) throws {
        let dir = makeTempDirectory("imgwarm-session")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = try Self.cache(c.holds, in: dir)
        let opened = try Self.checkOpenSession(c, cache)
        // The lock goes with the session.
        if opened && c.stateFolderAfter { #expect(try Self.exclusiveLockIsFree(cache)) }
    }

    /// Temp files of dead runs (a pid above Linux's pid_max: never alive)
    /// are removed when a warm starts; a dry run and prune leave them.
    @Test(arguments: [(Purpose.warm, 1), (.warmDryRun, 0), (.prune, 0)])
    func staleTempFilesGoAtTheStartOfAWarm(_ purpose: Purpose, _ removed: Int) throws {
        let dir = makeTempDirectory("imgwarm-session")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = try Self.cache(.usedCache, in: dir)
        let stale = cache.tempDirectory + "/4194305-1.tmp"
        #expect(FileManager.default.createFile(atPath: stale, contents: Data([0xFF, 0xD8])))
        let session = try CacheSession(cache, for: purpose.value)
        #expect(session.removedTempFiles == removed)
        #expect(FileManager.default.fileExists(atPath: stale) == (removed == 0))
    }

    /// While `cache clear --all` holds the lock, a warm is refused naming
    /// the folder, and opens no state database.
    @Test func aWarmIsRefusedWhileClearAllHoldsTheLock() throws {
        let dir = makeTempDirectory("imgwarm-session")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let used = try Self.cache(.usedCache, in: dir)
        try FileManager.default.removeItem(atPath: used.stateDirectory + "/state.sqlite")
        let holder = DiskCache(directory: used.directory)
        try holder.openExisting()
        let clear = try CacheLock(cache: holder, mode: .exclusive)
        #expect(throws: ImgWarmError.self) { _ = try CacheSession(DiskCache(directory: used.directory), for: .warm) }
        do {
            _ = try CacheSession(DiskCache(directory: used.directory), for: .warm)
        } catch let error as ImgWarmError {
            #expect(error.description == "\(used.directory): locked by `imgwarm cache clear --all`; try again when it ends")
        }
        #expect(!FileManager.default.fileExists(atPath: used.stateDirectory + "/state.sqlite"))
        withExtendedLifetime(clear) {}
    }
}
