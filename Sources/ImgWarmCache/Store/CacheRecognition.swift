#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan
import ImgWarmSupport

/// Whether imgwarm may delete in, or write entries into, a folder: it must
/// be recognisably a cache of the layout (imgwarm's `.imgwarm` state, the
/// layout's index, or only names the layout gives its files), and never
/// one of the folders no cache is (`/`, home folders, the top-level system
/// folders, a repository's root), whatever `--force` says.
public enum CacheRecognition {
    /// What a command is about to do to the folder.
    public enum Purpose: Sendable {
        /// `cache clear`, `cache prune`, `cache verify --delete`.
        case delete
        /// `warm` into a folder that exists.
        case write
    }

    /// The facts the verdict is made from.
    public struct Facts: Sendable, Equatable {
        /// Why the folder is never a cache (it is `/`, a home folder, a
        /// system folder), nil when it is none of those.
        public var protected: String?
        public var survey: CacheFolderSurvey
        public init(protected: String?, survey: CacheFolderSurvey) {
            self.protected = protected
            self.survey = survey
        }
    }

    public enum Verdict: Equatable, Sendable {
        case proceed
        /// Not recognised: exit 3 unless `--force` (the files that do not fit).
        case unrecognised(misfits: [String])
        /// Never, even with `--force`.
        case never(String)
    }

    /// The decision, from facts alone.
    public static func verdict(_ facts: Facts, layout: CacheLayoutKind, force: Bool) -> Verdict {
        if let protected = facts.protected { return .never(protected) }
        if facts.survey.holdsGit { return .never("holds .git: a repository, not a cache") }
        let s = facts.survey
        if s.holdsState || s.holdsIndex(of: layout) || s.namesFit(layout) { return .proceed }
        return force ? .proceed : .unrecognised(misfits: s.misfits[layout, default: []])
    }

    /// The one-line refusal for a verdict other than `.proceed`.
    public static func refusal(_ verdict: Verdict, path: String, layout: CacheLayoutKind, purpose: Purpose) -> ImgWarmError? {
        let action = purpose == .delete ? "nothing is deleted in it" : "nothing is written into it"
        switch verdict {
        case .proceed: return nil
        case .never(let why):
            return ImgWarmError.cache(path: path, reason: "\(why); \(action), not even with --force", errno: EPERM)
        case .unrecognised(let misfits):
            let named = misfits.map { "'\($0)'" }.joined(separator: ", ")
            return ImgWarmError.cache(path: path, reason: "not recognisably a \(layout.rawValue) cache (no .imgwarm, no \(layout.rawValue) index, "
                + "files it does not name so: \(named)); \(action) (--force to proceed)", errno: EPERM)
        }
    }

    /// Surveys `root` and judges it; throws the refusal (exit 3).
    public static func require(_ root: FolderHandle, layout: CacheLayoutKind, force: Bool, purpose: Purpose,
                               survey: CacheFolderSurvey? = nil) throws {
        let facts = Facts(protected: ProtectedFolders.current().reason(for: root.identity),
                          survey: survey ?? CacheFolderSurvey.survey(root))
        if let error = refusal(verdict(facts, layout: layout, force: force), path: root.path, layout: layout, purpose: purpose) {
            throw error
        }
    }
}

/// The folders that are never a cache, by device and inode: `/`, the
/// running user's home folder ($HOME and its passwd entry), every home
/// folder /etc/passwd lists, and the top-level system folders.
public struct ProtectedFolders: Sendable {
    public struct Folder: Sendable, Equatable {
        public var device: UInt64
        public var inode: UInt64
        public var reason: String
    }

    public var folders: [Folder] = []

    public init(folders: [Folder] = []) { self.folders = folders }

    /// The top-level folders of a Linux system (the Filesystem Hierarchy
    /// Standard's, and a few common ones).
    public static let systemFolders = ["/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
                                       "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp",
                                       "/usr", "/var", "/usr/local", "/var/tmp", "/var/cache", "/var/lib"]

    public func reason(for identity: FolderHandle.Identity) -> String? {
        folders.first { $0.device == identity.device && $0.inode == identity.inode }?.reason
    }

    /// The list for this process: system folders, $HOME, the running
    /// user's passwd home and every home in /etc/passwd.
    public static func current(environment: [String: String] = ProcessInfo.processInfo.environment,
                               passwd: String = "/etc/passwd") -> ProtectedFolders {
        var list = ProtectedFolders()
        for path in systemFolders { list.add(path, reason: path == "/" ? "the root folder /" : "a system folder (\(path))") }
        if let home = environment["HOME"], !home.isEmpty { list.add(home, reason: "a home folder ($HOME)") }
        if let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir {
            list.add(String(cString: dir), reason: "a home folder (of this user)")
        }
        if let text = try? String(contentsOfFile: passwd, encoding: .utf8) {
            for (user, home) in PasswdHomes.parse(text) { list.add(home, reason: "a home folder (of \(user) in /etc/passwd)") }
        }
        return list
    }

    /// Adds the folder at `path` (followed: a home may be a link to where
    /// it is) when it exists.
    public mutating func add(_ path: String, reason: String) {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return }
        let device = UInt64(st.st_dev), inode = UInt64(st.st_ino)
        if folders.contains(where: { $0.device == device && $0.inode == inode }) { return }
        folders.append(Folder(device: device, inode: inode, reason: reason))
    }
}

/// The home folders of a passwd file (`name:password:uid:gid:gecos:home:shell`).
public enum PasswdHomes {
    /// (user, home) per line with seven fields and an absolute home;
    /// comments, blank and malformed lines are skipped.
    public static func parse(_ text: String) -> [(user: String, home: String)] {
        var out: [(String, String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("#") { continue }
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 7, !fields[0].isEmpty, fields[5].hasPrefix("/") else { continue }
            out.append((String(fields[0]), String(fields[5])))
        }
        return out
    }
}
