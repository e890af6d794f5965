#if canImport(Glibc)
import Glibc
#endif
import CFileScan
import ImgWarmSupport

/// Removes inventory files with unlinkat relative to their folder's fd, after
/// judging them once more: between the walk and the unlink another process
/// may have read the file (a newer atime), replaced it (a concurrent `warm`
/// renames a fresh file over the name) or removed it (another prune).
///
/// A folder is opened again relative to its parent's descriptor, one
/// component at a time with O_NOFOLLOW, and must be the folder the walk
/// listed (device and inode): a sub-folder swapped for a symbolic link, or
/// for another folder, since the walk is not deleted in (by path,
/// such a swap made prune delete files outside the cache).
final class FileRemover {
    enum Outcome: Equatable {
        case removed
        /// Already gone: its space is free all the same.
        case vanished
        /// Its date moved past the limit since the walk: no longer due.
        case renewed
        case failed(Int32)
        /// Its folder is no longer the one listed (replaced, or a link
        /// now): nothing is removed in it.
        case folderReplaced
    }

    private let root: FolderHandle
    private let names: [String]
    private let parents: [Int]
    private let identities: [FolderHandle.Identity]
    private let policy: PrunePolicy
    private let dryRun: Bool
    /// Sub-folder fds (or -errno), opened on first use. Caches are flat or
    /// shallow; the cap keeps a cache of very many folders within the fd limit.
    private var folderFds: [Int: Int32] = [:]
    private static let maxOpenFolders = 64

    init(root: FolderHandle, inventory: CacheInventory, policy: PrunePolicy, dryRun: Bool) {
        self.root = root
        names = inventory.directoryNames
        parents = inventory.directoryParents
        identities = inventory.directoryIdentities
        self.policy = policy
        self.dryRun = dryRun
    }

    /// A remover for the files of `directory` itself (no sub-folders),
    /// opened here with O_NOFOLLOW.
    convenience init(directory: String, policy: PrunePolicy, dryRun: Bool) throws {
        let root = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: true)
        let inventory = CacheInventory()
        inventory.directoryIdentities = [root.identity]
        self.init(root: root, inventory: inventory, policy: policy, dryRun: dryRun)
    }

    deinit {
        for fd in folderFds.values where fd >= 0 { close(fd) }
    }

    /// Removes `name` (in folder `directoryIndex`) if its date is still at or
    /// before `dueDate`. A dry run removes nothing and judges on the walk's data.
    func remove(name: UnsafePointer<CChar>, directoryIndex: UInt32, dueDate: Int64) -> Outcome {
        if dryRun { return .removed }
        let dfd = folderFd(Int(directoryIndex))
        if dfd == Self.replaced { return .folderReplaced }
        if dfd < 0 { return dfd == -ENOENT ? .vanished : .failed(-dfd) }
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

    /// A folder that is not the one listed.
    private static let replaced: Int32 = Int32.min

    /// The folder's fd, `replaced`, or -errno: opened from its parent's fd
    /// (itself opened the same way), without following a link, and
    /// checked against the walk's device and inode. A loop from the
    /// nearest folder already open down to this one: a deep tree costs no
    /// stack, and the folders opened on the way are kept for the next file.
    private func folderFd(_ index: Int) -> Int32 {
        if index == 0 { return root.fd }
        if let fd = folderFds[index] { return fd }
        // The folders between the nearest open one and this one, deepest first.
        var chain: [Int] = []
        var i = index
        while i != 0 && folderFds[i] == nil {
            chain.append(i)
            i = parents[i]
        }
        if folderFds.count + chain.count > Self.maxOpenFolders {
            for fd in folderFds.values where fd >= 0 { close(fd) }
            folderFds.removeAll(keepingCapacity: true)
            chain.removeAll(keepingCapacity: true)
            i = index
            while i != 0 {
                chain.append(i)
                i = parents[i]
            }
        }
        var parent = i == 0 ? root.fd : (folderFds[i] ?? Self.replaced)
        // Down the chain, each folder opened from the one above; only the
        // deepest `maxOpenFolders` stay open, the others are closed as soon
        // as the folder below them is open.
        let steps = Array(chain.reversed())
        let keepFrom = max(0, steps.count - Self.maxOpenFolders)
        for (k, step) in steps.enumerated() {
            let fd: Int32
            if parent < 0 {
                fd = parent  // the parent's failure is this folder's
            } else {
                let result = imgwarm_open_folder_at(parent, names[step], 0)
                if result == -ELOOP || result == -ENOTDIR {
                    fd = Self.replaced  // a link, or a file, where the folder was
                } else if result < 0 {
                    fd = result
                } else {
                    var raw = imgwarm_identity_t()
                    if imgwarm_identity(result, &raw) != 0 || FolderHandle.Identity(raw) != identities[step] {
                        close(result)
                        fd = Self.replaced
                    } else {
                        fd = result
                    }
                }
            }
            // The parent, opened on this walk down and not kept.
            if k > 0 && k - 1 < keepFrom && parent >= 0 { close(parent) }
            if k >= keepFrom { folderFds[step] = fd }
            parent = fd
        }
        return folderFds[index] ?? Self.replaced
    }
}
