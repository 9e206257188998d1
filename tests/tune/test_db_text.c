/*
 * Text from a shared file reaches a terminal only as text: a control character (a terminal escape)
 * in a database entry's printed strings costs that entry, and a failed candidate's error message
 * is kept escaped as every error line is. The profile's side is in tests/model/test_hw_text.c.
 */
#include "../cli_run.h"
#include "tune_util.h"

Test(tune_db_text, a_control_character_in_an_entry_costs_the_entry_and_never_reaches_stdout, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    duet_tune_entry_t a = tt_entry_for(1000), b = tt_entry_for(2000);
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_db_store(&db, &b), DUET_OK, "%s", duet_last_error());
    /* JSON's \u001b is ESC: "ESC ]0;owned BEL" would retitle a terminal. Planted in the first entry
     * the file lists; each failed candidate's message gets ESC [2J (clear the screen). */
    tt_edit(db.path, "\"arch\":\t\"sm_90\"", "\"arch\":\t\"sm_90\\u001b]0;owned\\u0007\"");
    tt_edit(db.path, "\"device wait", "\"\\u001b[2Jdevice wait");
    tt_edit(db.path, "\"device wait", "\"\\u001b[2Jdevice wait");
    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(n, 1, "the entry with the escape is dropped, the other kept: %s", w.text);
    cr_assert(strstr(w.text, ".arch: 'sm_90\\x1b]0;owned\\x07' holds a control character") != NULL, "%s", w.text);
    cr_assert_str_eq(list[0].cands[1].error, "\\x1b[2Jdevice wait timed out after 5000 ms");
    free(list);

    static t_cli_t r;
    t_cli_run(&r, NULL, "tune", "--list", "--db", db.path, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strchr(r.out, '\x1b') == NULL && strchr(r.out, '\a') == NULL, "%s", r.out);
    cr_assert(strchr(r.err, '\x1b') == NULL, "%s", r.err);
    tt_rmdir(dir);
}
