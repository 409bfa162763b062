import streamlit as st
st.write('second_order')

from app.frame import page_guard

page_guard()
