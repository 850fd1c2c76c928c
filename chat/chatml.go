package chat

// ChatML is the template used for models that ship none (llama.cpp and
// transformers fall back to the same one):
//
//	<|im_start|>{role}\n{content}<|im_end|>\n ... [<|im_start|>assistant\n]
const ChatML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
