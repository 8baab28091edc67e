/* The runtime preset table. */
#include "sandbox/presets.h"

#include <string.h>

static const struct preset presets[] = {
    {.id = "react-vite",
     .label = "React + Vite",
     .description = "A React single-page app served by Vite's dev server",
     .port = 3000},
    {.id = "fastapi",
     .label = "FastAPI",
     .description = "A Python API with FastAPI, served by uvicorn",
     .port = 3000},
    {.id = "node-express",
     .label = "Node.js + Express",
     .description = "A Node.js web server with Express",
     .port = 3000},
    {.id = "static",
     .label = "Static site",
     .description = "Plain HTML, CSS and JavaScript files",
     .port = 3000},
    {.id = "nextjs",
     .label = "Next.js",
     .description = "A React app with Next.js's App Router, served by next "
                    "dev",
     .port = 3000},
    {.id = "worker",
     .label = "Background worker",
     .description = "A Node.js process that runs a job every few seconds, "
                    "with no web page",
     .port = 0},
};

const struct preset *
preset_find(const char *id)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (strcmp(presets[i].id, id) == 0)
			return &presets[i];
	return NULL;
}

const char *
preset_names(void)
{
	return "react-vite, fastapi, node-express, static, nextjs, worker";
}

const struct preset *
preset_at(size_t i)
{
	return i < sizeof(presets) / sizeof(presets[0]) ? &presets[i] : NULL;
}

const char *
preset_idle_policy(const char *id)
{
	const struct preset *p = preset_find(id);

	return p && p->port == 0 ? "always_on" : "sleep";
}
