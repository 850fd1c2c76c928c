// Package chat renders a conversation into the prompt text a model was
// trained on, by evaluating the model's chat template (GGUF metadata
// tokenizer.chat_template, the same Jinja2 source as tokenizer_config.json)
// the way Hugging Face's apply_chat_template does.
//
//	Compile(src) ---> *Template (src == "": ChatML, Fallback = true)
//	                     |
//	Render(msgs, Options) --> variables:
//	    messages              [{role, content}, ...]   ordered dicts, as Python builds them
//	    add_generation_prompt Options.AddGenerationPrompt
//	    bos_token, eos_token  Options.BOS, Options.EOS
//	    tools, documents      none unless Options.Vars sets them (HF always passes them)
//	    raise_exception(msg)  fails the render with *ExceptionError
//	    strftime_now(fmt)     Options.Now (zero: the wall clock), Python strftime codes
//	    Options.Vars          anything else the template reads (enable_thinking, date_string...)
//
// Evaluation is delegated to github.com/ardanlabs/jinja, a Go Jinja engine
// written for LLM chat templates with Hugging Face's environment built in
// (trim_blocks, lstrip_blocks, loop controls, tojson). This package adds
// what makes its output byte-identical to transformers': Jinja2's source
// normalisation (newlines to "\n", one trailing newline dropped), Python's
// dict ordering for messages and JSON variables, a clock that tests can fix,
// and errors that name the package and what failed.
//
// Invariants:
//   - A *Template is immutable after Compile and safe for concurrent Render.
//   - Rendering never panics: an engine panic comes back as an error.
//   - Golden tests (testdata/golden, made by Python Jinja2 with transformers'
//     settings, see testdata/gen_golden.py) pin the output byte for byte
//     for the Llama 2, Llama 3/3.1/3.2, Mistral, Qwen2.5, Qwen3, SmolLM2,
//     Zephyr/TinyLlama and ChatML templates.
package chat
