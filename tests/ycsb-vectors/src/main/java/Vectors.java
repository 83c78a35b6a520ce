// Writes reference vectors produced by YCSB core 0.17.0 itself, so that
// kvbench-workload's key names and key distributions can be checked against
// the real implementation rather than against a re-reading of its source.
//
// Keys and distributions are taken through site.ycsb.workloads.CoreWorkload
// (buildKeyName, nextKeynum), so every CoreWorkload-level detail -- the
// scrambled Zipfian's insert-range fudge, the rejection of not-yet-inserted
// keys, the exponential offset from the insert counter -- is in the data.
//
// Usage: java Vectors <output directory>

import java.io.IOException;
import java.io.Writer;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import site.ycsb.Utils;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

public final class Vectors {
  static final int RECORDS = 100_000;
  static final int DRAWS = 1_000_000;
  static final int TOP_RANKS = 100;
  static final int TOP_KEYS = 20;
  static final int HASHED_KEYS = 10_000;

  private Vectors() {
  }

  /** A CoreWorkload built from the given properties, with its key helpers opened up. */
  static final class Workload {
    final CoreWorkload workload;
    final Method buildKeyName;
    final Method nextKeynum;

    Workload(Properties p) throws Exception {
      // CoreWorkload's constructor fetches the Measurements singleton, which needs properties.
      Measurements.setProperties(p);
      workload = new CoreWorkload();
      workload.init(p);
      buildKeyName = CoreWorkload.class.getDeclaredMethod("buildKeyName", long.class);
      buildKeyName.setAccessible(true);
      nextKeynum = CoreWorkload.class.getDeclaredMethod("nextKeynum");
      nextKeynum.setAccessible(true);
    }

    String key(long keynum) throws Exception {
      return (String) buildKeyName.invoke(workload, keynum);
    }

    long next() throws Exception {
      return (Long) nextKeynum.invoke(workload);
    }
  }

  static Properties props(String... kv) {
    Properties p = new Properties();
    p.setProperty("recordcount", Integer.toString(RECORDS));
    p.setProperty("operationcount", Integer.toString(DRAWS));
    for (int i = 0; i < kv.length; i += 2) {
      p.setProperty(kv[i], kv[i + 1]);
    }
    return p;
  }

  static String quote(String s) {
    return "\"" + s + "\"";
  }

  static void writeKeys(Path dir) throws Exception {
    StringBuilder sb = new StringBuilder();
    sb.append("{\n  \"ycsb\": \"0.17.0\",\n");

    Workload hashed = new Workload(props());
    sb.append("  \"hashed_zeropadding_1\": [\n");
    for (int i = 0; i < HASHED_KEYS; i++) {
      sb.append("    ").append(quote(hashed.key(i))).append(i + 1 < HASHED_KEYS ? ",\n" : "\n");
    }
    sb.append("  ],\n");

    long[] keynums = {0L, 1L, 7L, 42L, 99_999L, 1_000_000L, 2_147_483_647L, 2_147_483_648L,
        1_234_567_890L, 12_345_678_901L, 10_000_000_000L, 1L << 40, Long.MAX_VALUE};
    sb.append("  \"cases\": [\n");
    String[][] configs = {
        {"ordered", "10"}, {"ordered", "1"}, {"ordered", "25"}, {"hashed", "1"}, {"hashed", "25"}};
    List<String> rows = new ArrayList<>();
    for (String[] c : configs) {
      Workload w = new Workload(props("insertorder", c[0], "zeropadding", c[1]));
      for (long k : keynums) {
        rows.add("    {\"insertorder\": " + quote(c[0]) + ", \"zeropadding\": " + c[1]
            + ", \"keynum\": " + Long.toUnsignedString(k) + ", \"key\": " + quote(w.key(k)) + "}");
      }
    }
    sb.append(String.join(",\n", rows)).append("\n  ],\n");

    sb.append("  \"fnvhash64\": [\n");
    rows.clear();
    long[] hashInputs = {0L, 1L, 2L, 255L, 256L, 1L << 32, 10_000_000_000L, Long.MAX_VALUE, -1L,
        Long.MIN_VALUE};
    for (long v : hashInputs) {
      rows.add("    {\"input\": " + quote(Long.toUnsignedString(v)) + ", \"output\": "
          + quote(Long.toString(Utils.fnvhash64(v))) + "}");
    }
    sb.append(String.join(",\n", rows)).append("\n  ]\n}\n");
    Files.write(dir.resolve("keys.json"), sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  static String doubles(double[] xs) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < xs.length; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(xs[i]);
    }
    return sb.append("]").toString();
  }

  static String distribution(String name, Properties p) throws Exception {
    Workload w = new Workload(p);
    HashMap<Long, int[]> counts = new HashMap<>();
    int[] deciles = new int[10];
    for (int i = 0; i < DRAWS; i++) {
      long k = w.next();
      counts.computeIfAbsent(k, x -> new int[1])[0]++;
      int d = (int) (k * 10 / RECORDS);
      deciles[Math.max(0, Math.min(9, d))]++;
    }
    List<Map.Entry<Long, int[]>> entries = new ArrayList<>(counts.entrySet());
    entries.sort((a, b) -> {
      int c = Integer.compare(b.getValue()[0], a.getValue()[0]);
      return c != 0 ? c : Long.compare(a.getKey(), b.getKey());
    });
    double[] top = new double[TOP_RANKS];
    for (int i = 0; i < TOP_RANKS && i < entries.size(); i++) {
      top[i] = entries.get(i).getValue()[0] / (double) DRAWS;
    }
    long top1 = 0;
    long top10 = 0;
    for (int i = 0; i < entries.size(); i++) {
      int c = entries.get(i).getValue()[0];
      if (i < RECORDS / 100) {
        top1 += c;
      }
      if (i < RECORDS / 10) {
        top10 += c;
      }
    }
    long[] topKeys = new long[Math.min(TOP_KEYS, entries.size())];
    for (int i = 0; i < topKeys.length; i++) {
      topKeys[i] = entries.get(i).getKey();
    }
    double[] decileShares = new double[10];
    for (int i = 0; i < 10; i++) {
      decileShares[i] = deciles[i] / (double) DRAWS;
    }
    return "    " + quote(name) + ": {\n"
        + "      \"top_ranks\": " + doubles(top) + ",\n"
        + "      \"top_1pct\": " + (top1 / (double) DRAWS) + ",\n"
        + "      \"top_10pct\": " + (top10 / (double) DRAWS) + ",\n"
        + "      \"distinct\": " + entries.size() + ",\n"
        + "      \"deciles\": " + doubles(decileShares) + ",\n"
        + "      \"top_keys\": " + Arrays.toString(topKeys) + "\n"
        + "    }";
  }

  static void writeDistributions(Path dir) throws Exception {
    List<String> parts = new ArrayList<>();
    parts.add(distribution("zipfian", props("requestdistribution", "zipfian")));
    parts.add(distribution("latest", props("requestdistribution", "latest")));
    parts.add(distribution("hotspot", props("requestdistribution", "hotspot")));
    parts.add(distribution("uniform", props("requestdistribution", "uniform")));
    parts.add(distribution("exponential", props("requestdistribution", "exponential")));
    String json = "{\n  \"ycsb\": \"0.17.0\",\n  \"records\": " + RECORDS + ",\n  \"draws\": " + DRAWS
        + ",\n  \"distributions\": {\n" + String.join(",\n", parts) + "\n  }\n}\n";
    Files.write(dir.resolve("distributions.json"), json.getBytes(StandardCharsets.UTF_8));
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: Vectors <output directory>");
      System.exit(2);
    }
    Path dir = Paths.get(args[0]);
    Files.createDirectories(dir);
    writeKeys(dir);
    writeDistributions(dir);
  }
}
