import Foundation

/// A decoder library imgwarm opens on first use (AVIF, HEIF, JPEG XL), as
/// this machine has it, found the way scripts/package.sh finds it and
/// independently of imgwarm's own table: the development symlink
/// (`libavif.so`, what the build compiled against) resolved to its file,
/// the soname that `ldconfig -p` lists for that same file, and the Debian
/// package `dpkg -S` says ships it (what the .deb's Depends names).
public struct CodecLibrary: Sendable, CustomStringConvertible {
    /// `avif`, `heif`, `jxl`.
    public var name: String
    /// `libavif.so.15`
    public var soname: String
    /// `libavif15`
    public var package: String
    public var description: String { name }

    /// Nil (with the reason) when a tool or the library is missing.
    public static func find(_ name: String) -> Result<CodecLibrary, Failure> {
        guard let ldconfig = findTool("ldconfig"), let listed = runTool(ldconfig, ["-p"]), listed.status == 0 else {
            return .failure(Failure("ldconfig -p did not run"))
        }
        // `\tlibavif.so.15 (libc6,x86-64) => /lib/x86_64-linux-gnu/libavif.so.15`
        let entries: [(String, String)] = listed.output.split(separator: "\n").compactMap { line in
            let parts = line.trimmingCharacters(in: .whitespaces).components(separatedBy: " => ")
            guard parts.count == 2, let so = parts[0].split(separator: " ").first else { return nil }
            return (String(so), parts[1])
        }
        let real = { (path: String) -> String in
            guard let resolved = realpath(path, nil) else { return path }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        guard let dev = entries.first(where: { $0.0 == "lib\(name).so" }) else {
            return .failure(Failure("no lib\(name).so in ldconfig -p (is lib\(name)-dev installed?)"))
        }
        let file = real(dev.1)
        guard let soname = entries.first(where: { $0.0.hasPrefix("lib\(name).so.") && real($0.1) == file })?.0 else {
            return .failure(Failure("no soname in ldconfig -p for \(file)"))
        }
        guard let dpkg = findTool("dpkg"), let owner = runTool(dpkg, ["-S", file]), owner.status == 0,
              let package = owner.output.split(separator: ":").first.map(String.init), !package.isEmpty else {
            return .failure(Failure("dpkg -S \(file) did not name a package"))
        }
        return .success(CodecLibrary(name: name, soname: soname, package: package))
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ d: String) { description = d }
    }

    /// A folder for LD_LIBRARY_PATH holding a damaged copy of this library
    /// under its soname: the dynamic loader finds it there first (ld.so(8):
    /// LD_LIBRARY_PATH is searched before the cache) and refuses it, so the
    /// real binary meets a library that cannot be opened with no hook of
    /// its own. The caller removes the folder.
    public func damagedCopyFolder() throws -> String {
        let dir = makeTempDirectory("imgwarm-no-\(name)")
        try Data("not a shared object\n".utf8).write(to: URL(fileURLWithPath: dir + "/" + soname))
        return dir
    }
}
