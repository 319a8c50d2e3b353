/* Whisper's languages: the codes in the order of their tokens, and openai's
 * names and aliases for them (openai/whisper tokenizer.py, LANGUAGES and
 * TO_LANGUAGE_CODE), so that "-l German" works as openai's --language German. */
#include <stddef.h>
#include <strings.h>

#include "hark.h"
#include "model/model.h"

static const struct { const char *code, *name; } LANGS[] = {
    {"en", "english"}, {"zh", "chinese"}, {"de", "german"}, {"es", "spanish"},
    {"ru", "russian"}, {"ko", "korean"}, {"fr", "french"}, {"ja", "japanese"},
    {"pt", "portuguese"}, {"tr", "turkish"}, {"pl", "polish"}, {"ca", "catalan"},
    {"nl", "dutch"}, {"ar", "arabic"}, {"sv", "swedish"}, {"it", "italian"},
    {"id", "indonesian"}, {"hi", "hindi"}, {"fi", "finnish"}, {"vi", "vietnamese"},
    {"he", "hebrew"}, {"uk", "ukrainian"}, {"el", "greek"}, {"ms", "malay"},
    {"cs", "czech"}, {"ro", "romanian"}, {"da", "danish"}, {"hu", "hungarian"},
    {"ta", "tamil"}, {"no", "norwegian"}, {"th", "thai"}, {"ur", "urdu"},
    {"hr", "croatian"}, {"bg", "bulgarian"}, {"lt", "lithuanian"}, {"la", "latin"},
    {"mi", "maori"}, {"ml", "malayalam"}, {"cy", "welsh"}, {"sk", "slovak"},
    {"te", "telugu"}, {"fa", "persian"}, {"lv", "latvian"}, {"bn", "bengali"},
    {"sr", "serbian"}, {"az", "azerbaijani"}, {"sl", "slovenian"}, {"kn", "kannada"},
    {"et", "estonian"}, {"mk", "macedonian"}, {"br", "breton"}, {"eu", "basque"},
    {"is", "icelandic"}, {"hy", "armenian"}, {"ne", "nepali"}, {"mn", "mongolian"},
    {"bs", "bosnian"}, {"kk", "kazakh"}, {"sq", "albanian"}, {"sw", "swahili"},
    {"gl", "galician"}, {"mr", "marathi"}, {"pa", "punjabi"}, {"si", "sinhala"},
    {"km", "khmer"}, {"sn", "shona"}, {"yo", "yoruba"}, {"so", "somali"},
    {"af", "afrikaans"}, {"oc", "occitan"}, {"ka", "georgian"}, {"be", "belarusian"},
    {"tg", "tajik"}, {"sd", "sindhi"}, {"gu", "gujarati"}, {"am", "amharic"},
    {"yi", "yiddish"}, {"lo", "lao"}, {"uz", "uzbek"}, {"fo", "faroese"},
    {"ht", "haitian creole"}, {"ps", "pashto"}, {"tk", "turkmen"}, {"nn", "nynorsk"},
    {"mt", "maltese"}, {"sa", "sanskrit"}, {"lb", "luxembourgish"}, {"my", "myanmar"},
    {"bo", "tibetan"}, {"tl", "tagalog"}, {"mg", "malagasy"}, {"as", "assamese"},
    {"tt", "tatar"}, {"haw", "hawaiian"}, {"ln", "lingala"}, {"ha", "hausa"},
    {"ba", "bashkir"}, {"jw", "javanese"}, {"su", "sundanese"}, {"yue", "cantonese"}};
enum { N_LANGS = sizeof LANGS / sizeof LANGS[0] };

/* openai's other names for some of them */
static const struct { const char *alias, *code; } ALIASES[] = {
    {"burmese", "my"}, {"valencian", "ca"}, {"flemish", "nl"}, {"haitian", "ht"},
    {"letzeburgesch", "lb"}, {"pushto", "ps"}, {"panjabi", "pa"}, {"moldavian", "ro"},
    {"moldovan", "ro"}, {"sinhalese", "si"}, {"castilian", "es"}, {"mandarin", "zh"}};

const char *hark_lang_code(int index)
{
    return index >= 0 && index < N_LANGS ? LANGS[index].code : NULL;
}

int hark_lang_index(const char *code_or_name)
{
    if (!code_or_name)
        return -1;
    for (int i = 0; i < N_LANGS; i++)
        if (!strcasecmp(code_or_name, LANGS[i].code) || !strcasecmp(code_or_name, LANGS[i].name))
            return i;
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (!strcasecmp(code_or_name, ALIASES[i].alias))
            return hark_lang_index(ALIASES[i].code);
    return -1;
}

const char *hark_language_code(const char *code_or_name)
{
    return hark_lang_code(hark_lang_index(code_or_name));
}

const char *hark_language_name(const char *code_or_name)
{
    int i = hark_lang_index(code_or_name);
    return i < 0 ? NULL : LANGS[i].name;
}
