## The LOD chain's share of a bake, for every character a user might bring: each animated .glb in
## res://assets_local/ and the generated soldier, baked whole (all clips, 30 fps) with the defaults
## (LOD on) and with lod_enabled off, alternating, in the same run. Reports the medians and their
## ratio (default / LOD off), the LOD step's own milliseconds, and the levels built. Called by
## bench_bake.gd; a benchmark, never a timed test.
extends RefCounted

const Util := preload("res://bench/bench_util.gd")
const CORPUS_DIR := "res://assets_local"
const FPS := 30.0


## One row per character: {name, default_ms, no_lod_ms, ratio, lod_ms, levels, notes}.
static func run(reps: int) -> Array:
	var paths: Array[String] = ["res://generated/soldier.tscn"]
	if DirAccess.dir_exists_absolute(CORPUS_DIR):
		var files := Array(DirAccess.get_files_at(CORPUS_DIR))
		files.sort()
		for f: String in files:
			if f.get_extension().to_lower() in ["glb", "gltf"]:
				paths.append(CORPUS_DIR.path_join(f))
	var rows := []
	for path in paths:
		var packed := load(path) as PackedScene
		if packed == null:
			push_warning("bench_bake_lod: cannot load %s; skipped" % path)
			continue
		var on := []
		var off := []
		var lod := []
		var last: Resource = null
		for r in reps:
			for lod_enabled in [true, false]:
				var va: Resource = ClassDB.instantiate("VertexAnimation")
				va.set("source_scene", packed)
				va.set("fps", FPS)
				va.set("lod_enabled", lod_enabled)
				var started := Time.get_ticks_usec()
				if va.call("bake") != OK:
					push_warning("bench_bake_lod: %s did not bake (lod_enabled %s)" % [path, lod_enabled])
					break
				var ms := (Time.get_ticks_usec() - started) / 1000.0
				if lod_enabled:
					on.append(ms)
					lod.append(float(va.call("get_bake_stats").get("lod_ms", NAN)))
					last = va
				else:
					off.append(ms)
		if on.is_empty() or off.is_empty():
			continue
		var row := {
			"name": path.get_file().get_basename(),
			"default_ms": Util.median(on),
			"no_lod_ms": Util.median(off),
			"lod_ms": Util.median(lod),
			"levels": int(last.call("get_lod_count")),
			"notes": last.call("get_bake_stats").get("lod_notes", []),
		}
		row["ratio"] = row.default_ms / maxf(row.no_lod_ms, 1e-3)
		print("  %-32s default %8.1f ms, LOD off %7.1f ms: %5.1fx (LOD step %.1f ms, %d levels)" % [
			row.name, row.default_ms, row.no_lod_ms, row.ratio, row.lod_ms, row.levels])
		rows.append(row)
	return rows
