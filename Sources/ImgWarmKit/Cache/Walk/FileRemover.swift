#if canImport(Glibc)
import Glibc
#endif
import CFileScan

/// Removes inventory files with unlinkat relative to their folder's fd, after
/// judging them once more: between the walk and the unlink another process
/// may have read the file (a newer atime), replaced it (a concurrent `warm`
/// renames a fresh file over the name) or removed it (another prune).
final class FileRemover {
    enum Outcome: Equatable {
        case removed
        /// Already gone: its space is free all the same.
        case vanished
        /// Its date moved past the limit since the walk: no longer due.
        case renewed
        case failed(Int32)
    }

    private let rootFd: Int32
    private let directories: [String]
    private let policy: PrunePolicy
    private let dryRun: Bool
    /// Sub-folder fds, opened on first use. Caches are flat or shallow; the
    /// cap keeps a cache of very many folders within the fd limit.
    private var folderFds: [UInt32: Int32] = [:]
    private static let maxOpenFolders = 64

    init(directory: String, directories: [String], policy: PrunePolicy, dryRun: Bool) throws {
        self.directories = directories
        self.policy = policy
        self.dryRun = dryRun
        rootFd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if rootFd < 0 {
            let e = errno
            throw CacheError(path: directory, reason: "cannot open cache folder: \(errnoString(e))", errno: e)
        }
    }

    deinit {
        for fd in folderFds.values { close(fd) }
        close(rootFd)
    }

    /// Removes `name` (in folder `directoryIndex`) if its date is still at or
    /// before `dueDate`. A dry run removes nothing and judges on the walk's data.
    func remove(name: UnsafePointer<CChar>, directoryIndex: UInt32, dueDate: Int64) -> Outcome {
        if dryRun { return .removed }
        let dfd = folderFd(directoryIndex)
        if dfd < 0 { return dfd == -ENOENT || dfd == -ENOTDIR ? .vanished : .failed(-dfd) }
        var info = imgwarm_stat()
        let statError = imgwarm_statat(dfd, name, &info)
        if statError == ENOENT || statError == ENOTDIR { return .vanished }
        if statError != 0 { return .failed(statError) }
        guard info.mode & UInt32(S_IFMT) == UInt32(S_IFREG) else { return .renewed }
        if policy.recordDate(info) > dueDate { return .renewed }
        if unlinkat(dfd, name, 0) == 0 { return .removed }
        let e = errno
        return e == ENOENT ? .vanished : .failed(e)
    }

    /// `remove(name:…)` for the name at `offset` in `names`, spelled out only
    /// when a file is really to go: a dry run over a million files lists
    /// each name afterwards, and every lookup is a cache miss in the arena.
    func remove(nameAt offset: UInt32, in names: NameArena, directoryIndex: UInt32, dueDate: Int64) -> Outcome {
        dryRun ? .removed : remove(name: names.name(offset), directoryIndex: directoryIndex, dueDate: dueDate)
    }

    /// The folder's fd, or -errno.
    private func folderFd(_ index: UInt32) -> Int32 {
        if index == 0 { return rootFd }
        if let fd = folderFds[index] { return fd }
        if folderFds.count >= Self.maxOpenFolders {
            for fd in folderFds.values { close(fd) }
            folderFds.removeAll(keepingCapacity: true)
        }
        let fd = openat(rootFd, directories[Int(index)], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return -errno }
        folderFds[index] = fd
        return fd
    }
}
