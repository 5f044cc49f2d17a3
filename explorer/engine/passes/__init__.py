"""The passes every engine that runs a model here makes: a prompt scored (`scoring`), a KV-cached decode loop
(`generation`, yielding `events`), scoring with word ends in the same pass (`word_ends`)."""
