/*
 * force_contact_layout.h - where the numbers of a contact_plane or tire
 * element sit in its block of the model vector: model knowledge, read by
 * the contact laws (src/forces/force_contact_common.h describes the
 * numbers) and by the geometry accessor of src/model/force_model.c.
 */
#ifndef MBS_FORCE_CONTACT_LAYOUT_H
#define MBS_FORCE_CONTACT_LAYOUT_H

enum {
    CT_K = 0, CT_N = 1, CT_CHI = 2, CT_R = 3, CT_EPS = 4, CT_P0 = 5, CT_NRM = 8, CT_AX = 11,
    CT_MU = 14, CT_VS = 15, CT_NX = 16,   /* contact_plane: Coulomb friction mu, slip speed v_s */
    TR_KC = 14, TR_AC = 15, TR_MUX = 16, TR_MUY = 17, TR_V0 = 18, TR_NX = 19
};

#endif
