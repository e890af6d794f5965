#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan
import ImgWarmSupport
import ImgWarmCache

public enum CacheMaintenance {
    public struct ClearResult: Sendable {
        public var files = 0
        public var bytes: UInt64 = 0
        /// `--all` asked for the state folder's removal and it failed (the
        /// entries were removed all the same): the command's exit status 3.
        public var stateNotRemoved: ImgWarmError?
        /// Sub-folders the walk skipped (too deep, unreadable), one line.
        public var skipped: String?
    }

    /// `cache clear`: removes every entry SDWebImage would see (hidden
    /// files and folders are not entries), and with `includingState`
    /// imgwarm's `.imgwarm/` folder. Empty sub-folders left behind are
    /// removed. Opens the cache with `DiskCache.openExisting` first (a
    /// symbolic link, or a `.imgwarm` of another user, is an error before
    /// anything is removed) and removes every name relative to the
    /// descriptor of the folder the walk listed it in.
    ///
    /// `wouldRemove`: a dry run; nothing is removed, each file that would
    /// go is handed over (its path relative to the cache folder, its size).
    public static func clear(_ cache: DiskCache, includingState: Bool,
                             wouldRemove: ((String, Int64) -> Void)? = nil) throws -> ClearResult {
        var result = ClearResult()
        if cache.rootFolder == nil {
            do {
                try cache.openExisting()
            } catch let error as ImgWarmError where error.errno == ENOENT && error.path == cache.directory {
                return result
            }
        }
        guard let root = cache.rootFolder else { return result }
        var firstError: ImgWarmError?
        var emptied = Set<Int>()
        // Every file, the index too: a DiskLruCache's own `delete()` removes
        // the folder's contents, journal included; flutter's database goes
        // with its files.
        var walker = DirectoryWalker()
        walker.descends = cache.backend.walksSubfolders
        walker.onLeaveFolder = { parentFd, name, index, parentIndex in
            guard emptied.contains(index) else { return }
            // Fails (ENOTEMPTY) when something else is still in it, and
            // (ENOTDIR) when a link stands at the name now: both are fine.
            if unlinkat(parentFd, name, AT_REMOVEDIR) == 0 { emptied.insert(parentIndex) }
        }
        let rootError = walker.walk(root) { entry in
            if let wouldRemove {
                wouldRemove(entry.directoryPath.isEmpty ? entry.nameString : entry.directoryPath + "/" + entry.nameString, entry.info.size)
                result.files += 1
                result.bytes += UInt64(max(0, entry.info.size))
                return
            }
            if unlinkat(entry.directoryFd, entry.name, 0) == 0 {
                result.files += 1
                result.bytes += UInt64(max(0, entry.info.size))
                emptied.insert(entry.directoryIndex)
            } else if errno != ENOENT, firstError == nil {
                let path = cache.directory + "/" + (entry.directoryPath.isEmpty ? "" : entry.directoryPath + "/") + entry.nameString
                firstError = ImgWarmError.cache(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
            }
        }
        if let rootError { throw rootError }
        result.skipped = walker.skippedSummary
        if includingState, wouldRemove == nil, let state = cache.stateFolder {
            result.stateNotRemoved = removeStateFolder(state, in: root)
        }
        if let firstError { throw firstError }
        return result
    }

    /// Removes `.imgwarm` and everything in it, relative to descriptors
    /// opened without following links; nil when it is gone, else what kept
    /// it (one line naming the path).
    static func removeStateFolder(_ state: FolderHandle, in root: FolderHandle) -> ImgWarmError? {
        if let error = removeContents(of: state) { return error }
        guard state.isStill(".imgwarm", in: root.fd) else {
            return ImgWarmError.cache(path: state.path, reason: "not removed: replaced while its files were removed", errno: ESTALE)
        }
        if unlinkat(root.fd, ".imgwarm", AT_REMOVEDIR) != 0 && errno != ENOENT {
            let e = errno
            return ImgWarmError.cache(path: state.path, reason: "not removed: \(errnoString(e))", errno: e)
        }
        return nil
    }

    /// Empties `folder` depth first; the first failure, naming its path.
    static func removeContents(of folder: FolderHandle) -> ImgWarmError? {
        var firstError: ImgWarmError?
        for name in StateFolders.listDirectory(folder.fd) {
            let path = folder.path + "/" + name
            var raw = imgwarm_identity_t()
            guard imgwarm_identity_at(folder.fd, name, &raw) == 0 else { continue }
            if raw.mode & UInt32(S_IFMT) == UInt32(S_IFDIR) {
                do {
                    let child = try FolderHandle.open(name, in: folder.fd, path: path, listing: true)
                    if let error = removeContents(of: child) {
                        firstError = firstError ?? error
                        continue
                    }
                } catch let error as ImgWarmError {
                    firstError = firstError ?? error
                    continue
                } catch {
                    continue
                }
                if unlinkat(folder.fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT {
                    firstError = firstError ?? ImgWarmError.cache(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
                }
            } else if unlinkat(folder.fd, name, 0) != 0 && errno != ENOENT {
                firstError = firstError ?? ImgWarmError.cache(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
            }
        }
        return firstError
    }
}
