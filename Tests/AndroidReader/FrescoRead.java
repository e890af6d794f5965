// A clean-room reader of Fresco's disk cache folder (`image_cache`),
// written from facebook/fresco at v3.6.0 and v3.7.0, not from its code:
//   DefaultDiskStorage.getVersionSubdirectoryName: "%s.ols%d.%d" of "v2",
//     SHARDING_BUCKET_COUNT = 100, version 1 -> "v2.ols100.1";
//   getSubdirectoryPath: String.valueOf(Math.abs(resourceId.hashCode() % 100))
//     (v3.6.0 Java), abs((...).toDouble()).toString() (v3.7.0 Kotlin: "22.0");
//   CONTENT_FILE_EXTENSION = ".cnt";
//   CacheKeyUtil.secureHashKey: SecureHashUtil.makeSHA1HashBase64 of
//     key.getUriString().getBytes("UTF-8"), Base64 URL_SAFE | NO_PADDING | NO_WRAP;
//   DiskStorageCache.getSortedEntries: timestamps beyond now + 2 h first,
//     then DefaultEntryEvictionComparatorSupplier: oldest timestamp first.
// Java's own String.hashCode, MessageDigest and Base64 do the arithmetic.
//
// Usage: java FrescoRead DIR integer|decimal URL...
// Prints per URL: URL <tab> relative path <tab> length or -1 <tab> SHA-256;
// then ORDER <tab> relative path, per .cnt file in eviction order.
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

public final class FrescoRead {
  public static void main(String[] args) throws Exception {
    File version = new File(args[0], "v2.ols100.1");
    boolean decimal = args[1].equals("decimal");
    StringBuilder out = new StringBuilder();
    for (int i = 2; i < args.length; i++) {
      byte[] sha1 = MessageDigest.getInstance("SHA-1").digest(args[i].getBytes(StandardCharsets.UTF_8));
      String id = Base64.getUrlEncoder().withoutPadding().encodeToString(sha1);
      int bucket = Math.abs(id.hashCode() % 100);
      String shard = decimal ? String.valueOf((double) bucket) : String.valueOf(bucket);
      File file = new File(new File(version, shard), id + ".cnt");
      String rel = "v2.ols100.1/" + shard + "/" + id + ".cnt";
      if (file.isFile()) {
        byte[] bytes = Files.readAllBytes(file.toPath());
        out.append(args[i]).append('\t').append(rel).append('\t').append(bytes.length).append('\t')
            .append(hex(MessageDigest.getInstance("SHA-256").digest(bytes))).append('\n');
      } else {
        out.append(args[i]).append('\t').append(rel).append("\t-1\t-\n");
      }
    }
    long threshold = System.currentTimeMillis() + 2 * 3600 * 1000L;
    List<File> future = new ArrayList<>();
    List<File> rest = new ArrayList<>();
    File[] shards = version.listFiles();
    if (shards != null) {
      for (File shard : shards) {
        File[] files = shard.listFiles();
        if (files == null) continue;
        for (File f : files) {
          if (!f.getName().endsWith(".cnt")) continue;
          if (f.lastModified() > threshold) future.add(f); else rest.add(f);
        }
      }
    }
    rest.sort((a, b) -> Long.compare(a.lastModified(), b.lastModified()));
    future.addAll(rest);
    for (File f : future) {
      out.append("ORDER\tv2.ols100.1/").append(f.getParentFile().getName()).append('/').append(f.getName()).append('\n');
    }
    System.out.print(out);
  }

  private static String hex(byte[] digest) {
    StringBuilder s = new StringBuilder();
    for (byte b : digest) s.append(String.format("%02x", b));
    return s.toString();
  }
}
