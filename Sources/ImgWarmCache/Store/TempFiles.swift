#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan
import ImgWarmSupport

/// Temp files: how they are named (created by `FileIO.createExclusive`),
/// and which ones a dead run left behind. The stores write theirs into
/// `.imgwarm/tmp` (`StateFolders`); the report writer beside its target.
enum TempFiles {
    /// A store's temp name: `PID-TAG-<tag>TOKEN.tmp`, TOKEN a keyed hash of
    /// `counter` (`imgwarm_unpredictable`): the next name cannot be guessed
    /// from earlier ones.
    static func runName(tag: String = "", counter: AtomicCounter) -> String {
        prefix + tag + Hex.padded(imgwarm_unpredictable(counter.next()), digits: 16) + ".tmp"
    }

    /// Temp names are `PID-TAG-TOKEN.tmp`. TAG identifies the writing process
    /// beyond its pid: runs in other containers (Kubernetes pods sharing a
    /// volume, each with its own pid namespace, where imgwarm is often pid 1)
    /// have the same pids, and `PID-N.tmp` names collided there (O_EXCL
    /// failed: spurious `disk` failures) and one pod's clean-up deleted
    /// another's live temp files (its rename failed).
    /// `PID-TAG-`, computed once: every stored file needs one.
    static let prefix = "\(getpid())-\(processTag)-"

    static let processTag: String = {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        // FNV-1a of the host name (the pod name in Kubernetes), then a
        // random part for hosts that share a name.
        var hash: UInt32 = 2_166_136_261
        for c in host.prefix(while: { $0 != 0 }) { hash = (hash ^ UInt32(UInt8(bitPattern: c))) &* 16_777_619 }
        return Hex.padded(hash, digits: 8) + Hex.padded(UInt32.random(in: 0...UInt32.max), digits: 8)
    }()

    /// Temp files of other hosts are judged by age, not pid (their pids mean
    /// nothing here): a live run keeps a temp file for the time of one
    /// write, so one untouched this long belongs to a run that died.
    static let foreignMaxAge: Double = 15 * 60

    /// The names in the temp folder of regular files no live run owns
    /// (hidden names are nobody's temp files).
    static func staleNames(in folder: Int32) -> [String] {
        StateFolders.listDirectory(folder).filter { name in
            !name.hasPrefix(".") && isStale(name, in: folder)
        }
    }

    /// Whether `name` in the temp folder is a regular file no live run owns.
    static func isStale(_ name: String, in folder: Int32) -> Bool {
        var st = stat()
        guard fstatat(folder, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
        // Folders and links are nothing a run leaves; they are left alone.
        guard (st.st_mode & S_IFMT) == S_IFREG else { return false }
        let parts = name.split(separator: "-")
        guard let pid = parts.first.flatMap({ pid_t($0) }) else { return true }
        if parts.count >= 3 {
            let tag = parts[1]
            if tag == Substring(processTag) { return false }  // this process
            if tag.count != 16 || tag.prefix(8) != processTag.prefix(8) {
                return Date().timeIntervalSince1970 - Double(st.st_mtim.tv_sec) > foreignMaxAge
            }
        }
        // This host (or a name from before tags): the pid says.
        return !processIsAlive(pid)
    }

    static func ownerPid(ofTempName name: String) -> pid_t? {
        guard let dash = name.firstIndex(of: "-"), let pid = pid_t(name[..<dash]) else { return nil }
        return pid
    }

    static func processIsAlive(_ pid: pid_t) -> Bool {
        if kill(pid, 0) == 0 { return true }
        return errno == EPERM
    }
}
