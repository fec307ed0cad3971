## Per-call benchmark: what one GDScript call costs, into the extension and into the RenderingServer, to find
## where the immediate crowd API (add_actor + add_model per actor) spends its time. Every row times a loop of
## CALLS calls (the fastest of ROUNDS loops) and reports ns per call, the empty loop's cost subtracted.
##
##   rs_set_transform       RenderingServer.multimesh_instance_set_transform (what per_instance_rs calls)
##   rs_set_custom_data     RenderingServer.multimesh_instance_set_custom_data
##   noop_static            an empty static #[func]
##   noop_ref / noop_mut    an empty #[func] taking &self / &mut self (gdext's bind / bind_mut guard)
##   noop_guarded           noop_mut plus the crowd nodes' main-thread check
##   noop_args              an empty #[func] with add_actor's arguments (Transform3D, int, float, float)
##   noop_opt_defaults      an empty #[func] with add_model's arguments, called with the defaults left out
##   noop_opt_all           the same, called with every argument
##   *_untyped              the same call through an untyped (Variant) receiver
##   add_actor, add_model, add_model_all   the crowd node's own calls (after begin(), one model)
##
## Run under the real renderer (--headless makes RenderingServer MultiMesh calls no-ops):
##   godot --path tests -s res://bench/bench_calls.gd -- [--quick] --out /abs/calls.json
extends SceneTree

const Util := preload("res://bench/bench_util.gd")
## Loops per row; the fastest counts, since a shared machine only ever adds time to a loop.
const ROUNDS := 9

var _calls := 200000
var _results: Array = []


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	var opts := Util.parse_args()
	if opts.quick:
		_calls = 50000
	print("bench_calls: %s, renderer %s, %s" % [Engine.get_version_info().string,
		RenderingServer.get_current_rendering_method(), RenderingServer.get_video_adapter_name()])
	if not ClassDB.class_exists("VatCrowdBench"):
		printerr("bench_calls: VatCrowdBench is not registered (extension not built?)")
		quit(1)
		return
	var vat: RefCounted = load("res://bench/bench_calls_vat.gd").new()
	var n := _calls
	var mesh := BoxMesh.new()
	var mm := RenderingServer.multimesh_create()
	RenderingServer.multimesh_set_mesh(mm, mesh.get_rid())
	RenderingServer.multimesh_allocate_data(mm, n, RenderingServer.MULTIMESH_TRANSFORM_3D, false, true)
	var crowd_ok: bool = vat.make_crowd(get_root())
	await process_frame
	var empty := _fastest(func() -> int: return _loop_empty(n))
	_row("empty_loop", empty, 0.0)
	_row("rs_set_transform", _fastest(func() -> int: return _loop_rs_transform(mm, n)), empty)
	_row("rs_set_custom_data", _fastest(func() -> int: return _loop_rs_custom(mm, n)), empty)
	for row: Array in vat.rows(n, crowd_ok):
		_row(row[0], _fastest(row[1]), empty)
	RenderingServer.free_rid(mm)
	vat.free_crowd()
	await process_frame
	print("")
	print("ns per call (fastest of %d loops of %d calls, empty loop subtracted)" % [ROUNDS, n])
	for r: Dictionary in _results:
		print("  %-24s %9.1f" % [r.call, r.ns_per_call])
	var err := Util.write_json(opts.out, {"calls": n, "rounds": ROUNDS, "results": _results,
		"godot": Engine.get_version_info().string})
	quit(0 if err == OK else 1)


## The fastest of ROUNDS runs of `loop` (which returns the microseconds its loop took).
func _fastest(loop: Callable) -> float:
	var best := INF
	for r in ROUNDS:
		best = minf(best, loop.call())
	return best


func _row(call_name: String, usec: float, empty_usec: float) -> void:
	var ns := (usec - empty_usec) * 1000.0 / _calls
	_results.append({"call": call_name, "ns_per_call": ns, "loop_usec": usec})
	print("  %-24s %9.1f ns per call" % [call_name, ns])


func _loop_empty(n: int) -> int:
	var t := Time.get_ticks_usec()
	for i in n:
		pass
	return Time.get_ticks_usec() - t


func _loop_rs_transform(mm: RID, n: int) -> int:
	var xf := Transform3D(Basis(), Vector3(1, 2, 3))
	var t := Time.get_ticks_usec()
	for i in n:
		RenderingServer.multimesh_instance_set_transform(mm, i, xf)
	return Time.get_ticks_usec() - t


func _loop_rs_custom(mm: RID, n: int) -> int:
	var c := Color(1, 2, 3, 4)
	var t := Time.get_ticks_usec()
	for i in n:
		RenderingServer.multimesh_instance_set_custom_data(mm, i, c)
	return Time.get_ticks_usec() - t
