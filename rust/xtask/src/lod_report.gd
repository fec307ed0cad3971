# Run by `cargo xtask lod` in its temporary project:
#   godot --headless --path PROJECT --script res://lod_report.gd -- --source res://X.glb --out DIR
# Bakes the file with VertexAnimation's default LOD settings and writes DIR/lod_report.json
# (source vertices, per level vertices/triangles/VAT columns/holes/loss, VAT bytes before and
# after, switch distances at 30 degrees and 1440 px) and DIR/lodN_silhouette.png (the worst view
# of each level: the source's silhouette left, the level's right). Exits 1 when the bake fails or
# builds no LOD chain (the reason is in the report's "notes").
extends SceneTree


func _initialize() -> void:
	_main.call_deferred()


func _main() -> void:
	quit(_run(OS.get_cmdline_user_args()))


func _run(args: PackedStringArray) -> int:
	var s := args.find("--source")
	var o := args.find("--out")
	if s < 0 or o < 0 or s + 1 >= args.size() or o + 1 >= args.size():
		printerr("lod_report.gd: usage: -- --source res://X.glb --out DIR")
		return 1
	var out := args[o + 1]
	DirAccess.make_dir_recursive_absolute(out)
	var va := VertexAnimation.new()
	va.source_scene = load(args[s + 1])
	if va.source_scene == null or va.bake() != OK:
		printerr("lod_report.gd: the bake failed (see the error above)")
		return 1
	var stats := va.get_bake_stats()
	var lods := []
	for l: Dictionary in stats["lods"]:
		lods.append({"level": l["level"], "vertices": l["vertices"], "triangles": l["triangles"],
			"vat_columns": l["vat_columns"], "holes_pct": l["holes_pct"], "loss_pct": l["loss_pct"]})
		var png := out.path_join("lod%d_silhouette.png" % l["level"])
		if (l["silhouette"] as Image).save_png(png) != OK:
			printerr("lod_report.gd: could not write ", png)
			return 1
	var report := {
		"source_vertices": stats["source_vertices"],
		"lods": lods,
		"vat_bytes_before": stats["vat_bytes_before"],
		"vat_bytes_after": stats["vat_bytes_after"],
		"switch_distances_m": Array(va.get_lod_switch_distances(30.0, 1440)),
		"lod_ms": stats["lod_ms"],
		"notes": Array(stats["lod_notes"]),
	}
	var f := FileAccess.open(out.path_join("lod_report.json"), FileAccess.WRITE)
	if f == null:
		printerr("lod_report.gd: could not write ", out.path_join("lod_report.json"))
		return 1
	f.store_string(JSON.stringify(report, "  ") + "\n")
	f.close()
	print("lod_report.gd: ", JSON.stringify(report))
	if lods.is_empty():
		printerr("lod_report.gd: no LOD chain was built: ", stats["lod_notes"])
		return 1
	return 0
