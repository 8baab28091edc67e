/* GET /v1/presets: the runtime presets an app can be created with. */
#include "api/api.h"
#include "sandbox/presets.h"

void
presets_list(struct req *r, struct resp *w)
{
	struct jv *arr = jv_arr(), *o;
	const struct preset *p;

	(void)r;
	for (size_t i = 0; (p = preset_at(i)) != NULL; i++) {
		o = jv_obj();
		jv_set_str(o, "id", p->id);
		jv_set_str(o, "label", p->label);
		jv_set_str(o, "description", p->description);
		if (p->port)
			jv_set_int(o, "port", p->port);
		else
			jv_set(o, "port", jv_new_null()); /* no web process */
		jv_push(arr, o);
	}
	o = jv_obj();
	jv_set(o, "presets", arr);
	api_reply_json(w, 200, o);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route presets_routes[] = {
    {.method = "GET", .pattern = "/v1/presets", .fn = presets_list},
    {0},
};
